"""Start-up of `mcpsqueeze wrap`: the backend starts before the command line is parsed and the first
`initialize` may be answered before the relay is imported; what the agent sees must not change."""

from __future__ import annotations

import json
import select
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from test_wrap_stdio import _running

from rawclient import cli, demo_server

DEADLINE = 30.0
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": "init-1",
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"},
    },
}

# Answers initialize after a log notification, then tools/list; its lines carry spaces (json.dumps).
CHATTY = """
import json, sys
for line in sys.stdin:
    message = json.loads(line)
    if message.get("method") == "initialize":
        print(json.dumps({"jsonrpc": "2.0", "method": "notifications/message",
                          "params": {"level": "info", "data": "starting"}}), flush=True)
        print(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": {
            "protocolVersion": "2025-06-18", "capabilities": {"tools": {}},
            "serverInfo": {"name": "chatty", "version": "1"}}}), flush=True)
    elif message.get("method") == "tools/list":
        print(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": {"tools": []}}), flush=True)
"""


def _line(message: dict[str, Any]) -> bytes:
    return json.dumps(message).encode() + b"\n"


def _session(tmp_path: Path, backend: list[str], data: bytes) -> list[dict[str, Any]]:
    """Everything the agent reads after writing `data` at once and closing its input."""
    done = subprocess.run(
        cli("wrap", "--recovery-dir", str(tmp_path / "rec"), "--", *backend),
        input=data,
        capture_output=True,
        timeout=DEADLINE,
    )
    assert done.returncode == 0, done.stderr.decode()
    return [json.loads(line) for line in done.stdout.splitlines()]


# A stdlib server answers before the relay is imported; the SDK demo server (~2 s to import) after.
@pytest.mark.parametrize(
    "backend", [[sys.executable, "-m", "mcpsqueeze.demo.bulk"], demo_server()], ids=["instant", "slow"]
)
def test_initialize_initialized_and_tools_list_written_at_once_are_all_answered(
    tmp_path: Path, backend: list[str]
) -> None:
    data = (
        _line(INITIALIZE)
        + _line({"jsonrpc": "2.0", "method": "notifications/initialized"})
        + _line({"jsonrpc": "2.0", "id": 7, "method": "tools/list"})
    )
    received = _session(tmp_path, backend, data)
    assert [m.get("id") for m in received] == ["init-1", 7]
    assert "serverInfo" in received[0]["result"]
    assert "squeeze_recover" in [t["name"] for t in received[1]["result"]["tools"]]


def test_a_backend_message_before_its_initialize_answer_reaches_the_agent_first(tmp_path: Path) -> None:
    data = _line(INITIALIZE) + _line({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
    received = _session(tmp_path, [sys.executable, "-c", CHATTY], data)
    assert [m.get("method") or m.get("id") for m in received] == ["notifications/message", "init-1", 2]
    assert received[1]["result"]["serverInfo"]["name"] == "chatty"
    assert [t["name"] for t in received[2]["result"]["tools"]] == ["squeeze_recover"]


def test_a_backend_started_before_the_command_line_is_parsed_does_not_outlive_a_usage_error() -> None:
    marker = "sleep 61.2346"  # `-- COMMAND` starts before click reads the unknown option
    done = subprocess.run(
        cli("wrap", "--no-such-option", "--", *marker.split()), capture_output=True, timeout=DEADLINE
    )
    assert done.returncode == 2, done.stderr
    assert b"no-such-option" in done.stderr
    assert not _running(marker)


def test_an_initialize_never_answered_still_times_out_with_the_agents_id(tmp_path: Path) -> None:
    silent = [sys.executable, "-c", "import sys; sys.stdin.readline(); sys.stdin.read()"]  # never answers
    proc = subprocess.Popen(
        cli("wrap", "--timeout", "1", "--recovery-dir", str(tmp_path / "rec"), "--", *silent),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(_line(INITIALIZE))
        proc.stdin.flush()
        ready, _, _ = select.select([proc.stdout], [], [], DEADLINE)  # the relay's watchdog answers
        assert ready, "no answer to initialize"
        answer = json.loads(proc.stdout.readline())
    finally:
        proc.kill()
        proc.wait()
    assert answer["id"] == "init-1"
    assert answer["error"]["code"] == -32001
    assert "within 1 s" in answer["error"]["message"]
