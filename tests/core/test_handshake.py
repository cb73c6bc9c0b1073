"""The first `initialize`, relayed before the relay is imported (`_handshake`), and what it leaves to the
relay: each case runs the real function in its own process, between real pipes and a real backend."""

from __future__ import annotations

import json
import select
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

SRC = Path(__file__).resolve().parents[2] / "src"
DEADLINE = 30.0

# Runs `handshake` between its own stdin/stdout and the backend given as Python code; the "imports" are
# one module that returns only once the gate file exists, so the test decides when they are done.
DRIVER = """
import json, os, sys
sys.path[:0] = [sys.argv[1], sys.argv[2]]
from mcpsqueeze.proxy import _handshake
from mcpsqueeze.transports import _prestart
argv = [sys.executable, "-c", sys.argv[3]]
_prestart.prestart(argv)
listing = os.environ.get("LISTING")
listing = _handshake.Catalog(*json.loads(listing)) if listing is not None else None
_handshake.handshake(_prestart.started(argv), ["gated_import"], listing)
state = _handshake.take()
out = {k: v.decode() if isinstance(v, bytes) else v for k, v in vars(state).items() if k != "sent"}
print("STATE " + json.dumps(out), file=sys.stderr)
_prestart.discard()
"""

GATED_IMPORT = """
import os, time
deadline = time.monotonic() + 30
while not os.path.exists(os.environ["GATE"]) and time.monotonic() < deadline:
    time.sleep(0.01)
"""

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": "a-7",
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"},
    },
}
ANSWER = '{"jsonrpc": "2.0", "id": 1, "result": {"protocolVersion": "2025-06-18", "capabilities": {}}}'


def _line(message: dict[str, Any]) -> bytes:
    return json.dumps(message).encode() + b"\n"


class Driven:
    def __init__(self, tmp_path: Path, backend: str, listing: str | list[str] | bool | None = False) -> None:
        """``listing``: the `Catalog`'s recover tool, or its recover tool and `client` setting."""
        (tmp_path / "gated_import.py").write_text(GATED_IMPORT)
        self.gate = tmp_path / "gate"
        self.received = tmp_path / "received"
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-c",
                DRIVER,
                str(SRC),
                str(tmp_path),
                backend.replace("RECEIVED", str(self.received)),
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env={
                "GATE": str(self.gate),
                "PATH": "/usr/bin:/bin",
                **(
                    {}
                    if listing is False
                    else {"LISTING": json.dumps(listing if isinstance(listing, list) else [listing])}
                ),
            },
        )

    def write(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def read_answers(self, count: int) -> list[bytes]:
        return [self.read_answer() for _ in range(count)]

    def read_answer(self) -> bytes:
        """The first line written to the agent, within the deadline."""
        assert self.proc.stdout is not None
        ready, _, _ = select.select([self.proc.stdout], [], [], DEADLINE)
        assert ready, "nothing was written to the agent"
        return self.proc.stdout.readline()

    def close_input(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.stdin = None  # communicate() has nothing more to send

    def wait_received(self) -> str:
        deadline = time.monotonic() + DEADLINE
        while time.monotonic() < deadline:
            if self.received.exists() and self.received.read_text().endswith("\n"):
                return self.received.read_text()
            time.sleep(0.01)
        raise AssertionError("the backend received nothing")

    def finish(self) -> tuple[dict[str, Any], bytes]:
        """Let the imports end; (the handshake's state, what it wrote to the agent)."""
        self.gate.touch()
        stdout, stderr = self.proc.communicate(timeout=DEADLINE)
        states = [line for line in stderr.decode().splitlines() if line.startswith("STATE ")]
        assert states, stderr.decode()
        state: dict[str, Any] = json.loads(states[0].removeprefix("STATE "))
        return state, stdout


def _backend(answer: str, delay: float = 0.0, first: str = "") -> str:
    """Python code of a backend that writes `first`, reads one line and records it in RECEIVED, and
    writes `answer`: before recording it, or `delay` seconds after."""
    return (
        "import sys, time\n"
        f"sys.stdout.write({first!r}); sys.stdout.flush()\n"
        "line = sys.stdin.readline()\n"
        f"answer, delay = {answer!r} + '\\n', {delay}\n"
        "if not delay: sys.stdout.write(answer); sys.stdout.flush()\n"
        "open('RECEIVED', 'w').write(line)\n"
        "if delay: time.sleep(delay); sys.stdout.write(answer); sys.stdout.flush()\n"
        "sys.stdin.read()\n"
    )


def test_the_backend_answer_reaches_the_agent_with_its_own_id_before_the_imports_end(tmp_path: Path) -> None:
    driven = Driven(tmp_path, _backend(ANSWER))
    driven.write(_line(INITIALIZE))
    answer = driven.read_answer()  # the gate is still closed: the imports are not done
    assert answer == ANSWER.replace('"id": 1', '"id": "a-7"').encode() + b"\n"  # the backend's bytes
    forwarded = json.loads(driven.wait_received())
    assert forwarded == {**INITIALIZE, "id": 1}
    state, _ = driven.finish()
    assert state["answered"] is True
    assert state["protocol"] == "2025-06-18"
    assert state["request"] == INITIALIZE
    assert (state["front"], state["back"], state["front_eof"]) == ("", "", False)


def test_what_the_agent_sent_after_initialize_is_left_to_the_relay(tmp_path: Path) -> None:
    driven = Driven(tmp_path, _backend(ANSWER))
    later = _line({"jsonrpc": "2.0", "method": "notifications/initialized"}) + _line(
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
    )
    driven.write(_line(INITIALIZE) + later)  # one write: read together
    driven.read_answer()
    state, _ = driven.finish()
    assert state["answered"] is True
    assert state["front"].encode() == later


@pytest.mark.parametrize(
    "first",
    [
        {"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
        {"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {}},
        {**INITIALIZE, "params": {**INITIALIZE["params"], "_meta": {"progressToken": 5}}},
        {"jsonrpc": "2.0", "method": "initialize", "params": {}},  # a notification
    ],
    ids=["tools-list", "discover", "initialize-with-meta", "initialize-notification"],
)
def test_any_other_first_message_is_left_to_the_relay_unsent(tmp_path: Path, first: dict[str, Any]) -> None:
    driven = Driven(tmp_path, _backend(ANSWER))
    driven.write(_line(first))
    state, stdout = driven.finish()
    assert state["request"] is None
    assert state["front"].encode() == _line(first)
    assert stdout == b""
    assert not driven.received.exists()


def test_a_backend_that_speaks_before_the_agent_is_left_to_the_relay(tmp_path: Path) -> None:
    notice = '{"jsonrpc": "2.0", "method": "notifications/message", "params": {"data": "up"}}\n'
    driven = Driven(tmp_path, _backend(ANSWER, first=notice))
    state, stdout = driven.finish()
    assert state["request"] is None
    assert state["back"] == ""  # not even read: the relay reads it from the pipe
    assert stdout == b""


def test_a_backend_message_before_its_answer_leaves_the_request_pending(tmp_path: Path) -> None:
    notice = '{"jsonrpc": "2.0", "method": "notifications/message", "params": {"data": "starting"}}'
    driven = Driven(tmp_path, _backend(notice + "\n" + ANSWER))
    driven.write(_line(INITIALIZE))
    driven.wait_received()  # the backend wrote both lines before it recorded the request
    state, stdout = driven.finish()
    assert state["request"] == INITIALIZE
    assert state["answered"] is False
    assert state["back"].startswith(notice + "\n")  # the relay forwards it, then relays the answer
    assert stdout == b""


def test_when_the_imports_end_first_the_request_stays_pending_for_the_relay(tmp_path: Path) -> None:
    driven = Driven(tmp_path, _backend(ANSWER, delay=60))
    driven.write(_line(INITIALIZE))
    driven.wait_received()
    state, stdout = driven.finish()
    assert state["request"] == INITIALIZE
    assert state["answered"] is False
    assert stdout == b""


def test_a_backend_gone_before_answering_leaves_the_request_pending(tmp_path: Path) -> None:
    driven = Driven(tmp_path, "import sys; open('RECEIVED', 'w').write(sys.stdin.readline())")
    driven.write(_line(INITIALIZE))
    driven.wait_received()
    state, stdout = driven.finish()
    assert (state["request"], state["answered"]) == (INITIALIZE, False)  # the relay answers: backend gone
    assert stdout == b""


def test_the_agent_closing_its_input_is_passed_on(tmp_path: Path) -> None:
    driven = Driven(tmp_path, _backend(ANSWER))
    driven.close_input()
    state, _ = driven.finish()
    assert state["front_eof"] is True
    assert state["request"] is None


# -- with a Catalog: the first tools/list too ---------------------------------------------------------------

INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}
TOOLS_LIST = {"jsonrpc": "2.0", "id": 7, "method": "tools/list"}


def _lister(tools: list[dict[str, Any]], more: dict[str, Any] | None = None) -> str:
    """Python code of a backend that records every line it reads in RECEIVED and answers initialize and
    tools/list (its result `{"tools": tools, **more}`), each with the id it was sent."""
    listed = json.dumps({"tools": tools, **(more or {})})
    return (
        "import json, sys\n"
        "for line in sys.stdin:\n"
        "    open('RECEIVED', 'a').write(line)\n"
        "    m = json.loads(line)\n"
        "    if m.get('method') == 'initialize':\n"
        f"        sys.stdout.write({ANSWER!r}.replace('\"id\": 1', '\"id\": %d' % m['id']) + '\\n')\n"
        "    elif m.get('method') == 'tools/list':\n"
        f"        sys.stdout.write(json.dumps({{'jsonrpc': '2.0', 'id': m['id'], 'result': json.loads({listed!r})}}) + '\\n')\n"
        "    sys.stdout.flush()\n"
    )


def _received_lines(driven: Driven, count: int) -> list[dict[str, Any]]:
    deadline = time.monotonic() + DEADLINE
    while time.monotonic() < deadline:
        if driven.received.exists():
            lines = driven.received.read_text().splitlines()
            if len(lines) >= count:
                return [json.loads(line) for line in lines]
        time.sleep(0.01)
    raise AssertionError("the backend did not receive everything")


def test_the_first_tools_list_is_answered_with_the_recover_tool_before_the_imports_end(
    tmp_path: Path,
) -> None:
    driven = Driven(
        tmp_path, _lister([{"name": "echo", "inputSchema": {"type": "object"}}]), "squeeze_recover"
    )
    driven.write(_line(INITIALIZE) + _line(INITIALIZED) + _line(TOOLS_LIST))
    _, listed = driven.read_answers(2)  # the gate is still closed
    answer = json.loads(listed)
    assert answer["id"] == 7
    assert [t["name"] for t in answer["result"]["tools"]] == ["echo", "squeeze_recover"]
    # The backend saw what the relay would have sent: its own ids 1 and 2, the notification as it was.
    assert _received_lines(driven, 3) == [{**INITIALIZE, "id": 1}, INITIALIZED, {**TOOLS_LIST, "id": 2}]
    state, _ = driven.finish()
    assert (state["listed"], state["recover_tool"], state["listing"]) == (True, "squeeze_recover", TOOLS_LIST)
    assert (state["front"], state["back"]) == ("", "")


def test_the_first_listing_is_shaped_for_the_client_the_initialize_names(tmp_path: Path) -> None:
    tools = [{"name": "read", "inputSchema": {"type": "object"}, "outputSchema": {"type": "object"}}]
    driven = Driven(tmp_path, _lister(tools), ["squeeze_recover", "auto"])
    claude = {**INITIALIZE, "params": {**INITIALIZE["params"], "clientInfo": {"name": "claude-code"}}}
    driven.write(_line(claude) + _line(INITIALIZED) + _line(TOOLS_LIST))
    _, listed = driven.read_answers(2)  # the gate is still closed: the handshake answered it
    read, recover = json.loads(listed)["result"]["tools"]
    assert "outputSchema" not in read
    assert recover["_meta"]["anthropic/maxResultSizeChars"] > 40_000
    driven.finish()


def test_the_recover_tool_takes_the_first_free_name(tmp_path: Path) -> None:
    owned = [{"name": "squeeze_recover", "inputSchema": {"type": "object"}}]
    driven = Driven(tmp_path, _lister(owned), "squeeze_recover")
    driven.write(_line(INITIALIZE) + _line(INITIALIZED) + _line(TOOLS_LIST))
    _, listed = driven.read_answers(2)
    names = [t["name"] for t in json.loads(listed)["result"]["tools"]]
    assert names == ["squeeze_recover", "squeeze_recover_2"]
    state, _ = driven.finish()
    assert state["recover_tool"] == "squeeze_recover_2"


@pytest.mark.parametrize("recover_tool", [None, "squeeze_recover"], ids=["no-recover-tool", "page"])
def test_a_listing_without_the_recover_tool_is_the_backend_s_own(
    tmp_path: Path, recover_tool: str | None
) -> None:
    more = {} if recover_tool is None else {"nextCursor": "p2"}  # not the last page: nothing appended
    driven = Driven(
        tmp_path, _lister([{"name": "echo", "inputSchema": {"type": "object"}}], more), recover_tool
    )
    driven.write(_line(INITIALIZE) + _line(INITIALIZED) + _line(TOOLS_LIST))
    _, listed = driven.read_answers(2)
    assert json.loads(listed)["result"] == {
        "tools": [{"name": "echo", "inputSchema": {"type": "object"}}],
        **more,
    }
    state, _ = driven.finish()
    assert state["listed"] is True


@pytest.mark.parametrize(
    "second",
    [
        {**TOOLS_LIST, "params": {"_meta": {"progressToken": 1}}},
        {"jsonrpc": "2.0", "id": 7, "method": "prompts/list"},
        {"jsonrpc": "2.0", "method": "notifications/initialized", "params": {"_meta": {"x": 1}}},
    ],
    ids=["listing-with-meta", "another-request", "notification-with-meta"],
)
def test_anything_less_plain_after_initialize_is_left_to_the_relay(
    tmp_path: Path, second: dict[str, Any]
) -> None:
    driven = Driven(tmp_path, _lister([]), "squeeze_recover")
    driven.write(_line(INITIALIZE) + _line(second))
    driven.read_answer()
    state, _ = driven.finish()
    assert state["listing"] is None
    assert state["front"].encode() == _line(second)


def test_a_listing_unanswered_when_the_imports_end_stays_pending_for_the_relay(tmp_path: Path) -> None:
    slow = _lister([]).replace("    elif m.get('method') == 'tools/list':\n", "    elif False:\n")
    driven = Driven(tmp_path, slow, "squeeze_recover")
    driven.write(_line(INITIALIZE) + _line(INITIALIZED) + _line(TOOLS_LIST))
    driven.read_answer()
    _received_lines(driven, 3)
    state, stdout = driven.finish()
    assert (state["listing"], state["listed"]) == (TOOLS_LIST, False)
    assert stdout == b""
