"""The same hostile recover arguments through every door, each parsed by the one RecoverRequest: the MCP
tool in `mcpsqueeze wrap` (an isError answer, and wrap answers the next call), serve's
`GET /v1/recover/...` (a 400 naming the bound, never a 500), `mcpsq recover` (exit 2 with a message, no
traceback), `Squeezer.recover` and `Toolset` (UsageError / an isError answer) and `Client.recover`
(UsageError); the doors run in this process. (Code Mode's generated `squeeze_recover`:
test_code_mode_hostile_names.py.)"""

from __future__ import annotations

import json
import os
import re
import sys
import urllib.parse
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from recover_hostile import HOSTILE, ORIGINAL_DOC

from mcpsqueeze import Client, Squeezer, UsageError, shrink_tools
from memwrap import MemoryWrap, mcpsq
from rawclient import demo_server
from serve.serve_api import api, serve_in_process, write_token

IDS = [case[0] for case in HOSTILE]
SEARCH = {"query": "bug", "limit": 200}
DEMO = {"demo": {"command": sys.executable, "args": ["-m", "mcpsqueeze.demo.server"]}}
# What the shell flags can say: offset and length have none.
SHELL_FLAGS = {"pointer": "--pointer", "lines": "--lines", "query": "--query", "grep": "--grep"}
SHELL_FLAGS |= {"search": "--search", "context": "--context"}
SHELL_CASES = [case for case in HOSTILE if set(case[1]) <= set(SHELL_FLAGS)]


def _error_text(result: dict[str, Any]) -> str:
    assert result.get("isError") is True, result
    return "".join(block["text"] for block in result["content"])


def test_the_mcp_tool_in_wrap_refuses_each_and_answers_the_next_call(tmp_path: Path) -> None:
    # whole answers (no pages): the test reads the recovered JSON back in one piece
    with MemoryWrap(["--recovery-dir", str(tmp_path / "rec"), "--page-size", "100000000"]) as client:
        client.initialize()
        shrunk = client.call("search_issues", SEARCH)
        rid = shrunk["_meta"]["truncation"]["response_id"]
        for case, arguments, bound in HOSTILE:
            answer = client.call("squeeze_recover", {"response_id": rid, **arguments}, timeout=30)
            assert re.search(bound, _error_text(answer)), (case, answer)
        whole = client.call("squeeze_recover", {"response_id": rid})
        assert json.loads(whole["content"][0]["text"])["issues"]
        code = client.close()
    assert code == 0, client.stderr
    assert "Traceback" not in client.stderr


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str, str, Path]]:
    """A serve on loopback, run in this process (serve_in_process): (url, token, a shrunk result's id,
    its recovery directory)."""
    tmp = tmp_path_factory.mktemp("serve")
    token = write_token(tmp / "token")
    rec = tmp / "rec"
    with serve_in_process(
        "--recovery-dir", str(rec), "--budget", "2000", "--listen", "127.0.0.1:0",
        "--token-file", str(tmp / "token"), "-n", "demo", "--", *demo_server(),
    ) as url:  # fmt: skip
        status, first = api(
            url, token, "/v1/call", {"server": "demo", "tool": "search_issues", "arguments": SEARCH}
        )
        assert status == 200 and first["action"] == "shrink", first
        yield url, token, first["response_id"], rec


@pytest.mark.parametrize(("case", "arguments", "bound"), HOSTILE, ids=IDS)
def test_serve_answers_400_naming_the_bound(
    served: tuple[str, str, str, Path], case: str, arguments: dict[str, Any], bound: str
) -> None:
    url, token, rid, _ = served
    query = urllib.parse.urlencode(
        {k: json.dumps(v) if not isinstance(v, str) else v for k, v in arguments.items()}
    )
    status, body = api(url, token, f"/v1/recover/{rid}?{query}")
    assert status == 400, body
    if case not in ("offset-bool", "offset-float"):  # as text, True and 1.5 are refused as numbers too
        assert re.search(bound, body["error"]["message"]), body
    status, whole = api(url, token, f"/v1/recover/{rid}")  # the session still answers
    assert status == 200 and whole["result"]["content"]


@pytest.mark.parametrize(("case", "arguments", "bound"), SHELL_CASES, ids=[c[0] for c in SHELL_CASES])
def test_mcpsq_recover_exits_2_with_a_message_and_no_traceback(
    served: tuple[str, str, str, Path], case: str, arguments: dict[str, Any], bound: str
) -> None:
    _, _, rid, rec = served
    flags = [word for key, value in arguments.items() for word in (SHELL_FLAGS[key], str(value))]
    env = {k: v for k, v in os.environ.items() if not k.startswith("MCPSQUEEZE_")}
    env |= {"MCPSQUEEZE_RECOVERY_DIR": str(rec), "MCPSQUEEZE_SOCKET": str(rec / "none.sock")}
    done = mcpsq(["recover", rid, *flags], env)
    assert done.returncode == 2, done
    assert "Traceback" not in done.stderr and re.search(bound, done.stderr), done.stderr
    assert done.stdout == ""


def _big_result() -> dict[str, Any]:
    return {"content": [{"type": "text", "text": json.dumps(ORIGINAL_DOC)}], "isError": False}


@pytest.mark.anyio
async def test_squeezer_raises_usage_error_and_toolset_answers_is_error() -> None:
    squeezer = Squeezer(budget=2000)
    presented = await squeezer.present("s", "t", {}, _big_result())
    rid = presented["_meta"]["truncation"]["response_id"]
    for _case, arguments, bound in HOSTILE:
        with pytest.raises(UsageError, match=bound):
            squeezer.recover(rid, **arguments)
    assert json.loads(squeezer.recover(rid)) == ORIGINAL_DOC
    squeezer.close()

    toolset = shrink_tools([big_tool], budget=2000, shrink_above=2000)
    shrunk = await toolset.call("big_tool", {})
    rid = shrunk["_meta"]["truncation"]["response_id"]
    for case, arguments, bound in HOSTILE:
        answer = await toolset.call(toolset.recover_tool, {"response_id": rid, **arguments})
        assert re.search(bound, _error_text(answer)), case
    toolset.close()


def big_tool() -> dict[str, Any]:
    """A host tool whose result is too big to show whole."""
    return ORIGINAL_DOC


def test_client_recover_raises_usage_error_naming_the_bound() -> None:
    with Client(DEMO, budget=2000) as client:
        shrunk = client.call("demo", "search_issues", SEARCH)
        rid = shrunk["_meta"]["truncation"]["response_id"]
        for _case, arguments, bound in HOSTILE:
            with pytest.raises(UsageError, match=bound):
                client.recover(rid, **arguments)
        assert json.loads(client.recover(rid))["issues"]
