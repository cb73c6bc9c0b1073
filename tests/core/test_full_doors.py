"""`full` through every door, against a backend that counts its calls (tests/fixtures/ledger_server.py).

Each door runs one scenario: a write tool's large result is shrunk, and `full` returns that call's
original byte for byte without the write running again; a write shown whole, and a write this
conversation never made, get the error instead of a second write; a read-only tool never called runs
and is shown unshrunk. The MCP doors and the Client run with `--compress-tools medium` (`full=true` on
`<server>_invoke_tool`); the plain tools/call's `_meta["mcpsqueeze/full"]`, `mcpsq TOOL --full`, Code
Mode's `full` and `Squeezer.full` each get the same scenario. Tenants never get each other's originals.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from anyio.from_thread import start_blocking_portal
from mcp import Client as SdkClient
from pydantic import TypeAdapter

from fixtures.ledger_server import calls_of, rows_text
from mcpsqueeze import Client, Squeezer
from memwrap import HttpWrap, MemoryWrap, Serve, generated_modules, mcpsq
from rawclient import RawClient, text

LEDGER = [sys.executable, str(Path(__file__).parents[1] / "fixtures" / "ledger_server.py")]
COMPRESSED = ("--compress-tools", "medium", "--name", "ledger")
BIG = 600
RAW: Any = TypeAdapter(dict[str, Any])

#: One door: (tool, arguments, full) -> the CallToolResult it answers.
Door = Callable[[str, dict[str, Any], bool], dict[str, Any]]


@pytest.fixture
def ledger(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "ledger.txt"
    monkeypatch.setenv("LEDGER_FILE", str(path))  # read at each call, by an in-process or spawned server
    return path


def check_full(door: Door, ledger: Path | Callable[[str], int], tag: str) -> None:
    """The scenario every door runs (see the module's docstring); `ledger`: the backend's, or how many
    times a tool ran."""
    counted = ledger if callable(ledger) else lambda tool: calls_of(tool, tag, ledger)
    shrunk = door("write_rows", {"n": BIG, "tag": tag}, False)
    assert len(text(shrunk)) < len(rows_text(BIG, tag, 1)) and counted("write_rows") == 1
    original = door("write_rows", {"tag": tag, "n": BIG}, True)  # the same call, arguments in another order
    assert original.get("isError") is not True and text(original) == rows_text(BIG, tag, 1)
    assert counted("write_rows") == 1  # answered from the store: not written again

    small = door("write_rows", {"n": 1, "tag": tag}, False)
    assert text(small) == rows_text(1, tag, 2)
    for arguments in ({"n": 1, "tag": tag}, {"n": BIG, "tag": "never called"}):
        refused = door("write_rows", arguments, True)
        assert refused["isError"] is True and "call it without full" in text(refused)
    assert counted("write_rows") == 2

    read = door("read_rows", {"n": BIG, "tag": tag}, True)  # never called, read-only: runs, unshrunk
    assert text(read) == rows_text(BIG, tag, 1) and counted("read_rows") == 1


def invoke_over(client: RawClient) -> Door:
    def door(tool: str, arguments: dict[str, Any], full: bool) -> dict[str, Any]:
        asked = {"tool_name": tool, "tool_input": arguments, **({"full": True} if full else {})}
        return client.call("ledger_invoke_tool", asked)

    return door


def test_full_true_on_invoke_through_wrap_never_runs_a_write_again(tmp_path: Path, ledger: Path) -> None:
    options = ["--recovery-dir", str(tmp_path / "rec"), *COMPRESSED]
    with MemoryWrap(options, target=LEDGER) as client:
        client.initialize()
        check_full(invoke_over(client), ledger, "wrap")
    with MemoryWrap(options, target=LEDGER) as later:  # a new session: it made no calls yet
        later.initialize()
        refused = invoke_over(later)("write_rows", {"n": BIG, "tag": "wrap"}, True)
        assert refused["isError"] is True and "holds no original" in text(refused)
    assert calls_of("write_rows", "wrap", ledger) == 2


def test_the_full_meta_key_on_a_plain_call_through_wrap_never_runs_a_write_again(
    tmp_path: Path, ledger: Path
) -> None:
    with MemoryWrap(["--recovery-dir", str(tmp_path / "rec")], target=LEDGER) as client:
        client.initialize()

        def door(tool: str, arguments: dict[str, Any], full: bool) -> dict[str, Any]:
            meta = {"_meta": {"mcpsqueeze/full": True}} if full else {}
            return client.result("tools/call", {"name": tool, "arguments": arguments, **meta})

        check_full(door, ledger, "meta")


def test_full_true_over_stateless_http_never_runs_a_write_again(tmp_path: Path, ledger: Path) -> None:
    options = ["--recovery-dir", str(tmp_path / "rec"), *COMPRESSED]
    with (
        HttpWrap(options, LEDGER) as served,
        start_blocking_portal("asyncio") as portal,
        portal.wrap_async_context_manager(SdkClient(served.url, mode="2026-07-28")) as client,
    ):

        async def call(tool: str, arguments: dict[str, Any], full: bool) -> dict[str, Any]:
            asked = {"tool_name": tool, "tool_input": arguments, **({"full": True} if full else {})}
            params = types.CallToolRequestParams(name="ledger_invoke_tool", arguments=asked)
            result: dict[str, Any] = await client.session.send_request(
                types.CallToolRequest(params=params), RAW
            )
            return result

        check_full(lambda *asked: portal.call(call, *asked), ledger, "http")


def test_mcpsq_full_never_runs_a_write_again(tmp_path: Path, ledger: Path) -> None:
    socket = tmp_path / "run" / "s.sock"
    args = ["--socket", str(socket), "--recovery-dir", str(tmp_path / "rec"), "--budget", "4000"]
    with Serve([*args, "-n", "ledger", "--", *LEDGER]):
        env = {
            **os.environ,
            "MCPSQUEEZE_SOCKET": str(socket),
            "MCPSQUEEZE_RECOVERY_DIR": str(tmp_path / "rec"),
        }

        def door(tool: str, arguments: dict[str, Any], full: bool) -> dict[str, Any]:
            flags = [f"--{key}={value}" for key, value in arguments.items()] + (["--full"] if full else [])
            done = mcpsq(["ledger", tool.replace("_", "-"), *flags], env)
            if done.returncode == 1:  # the error is on stderr
                return {"content": [{"type": "text", "text": done.stderr}], "isError": True}
            assert done.returncode == 0, done.stderr
            return {"content": [{"type": "text", "text": done.stdout.removesuffix("\n")}]}

        check_full(door, ledger, "shim")


def test_full_through_client_and_its_code_mode_never_runs_a_write_again(tmp_path: Path, ledger: Path) -> None:
    servers = {"ledger": {"command": LEDGER[0], "args": LEDGER[1:]}}
    with Client(servers, budget=4000, config=False, compress_tools="medium") as client:

        def door(tool: str, arguments: dict[str, Any], full: bool) -> dict[str, Any]:
            asked = {"tool_name": tool, "tool_input": arguments, **({"full": True} if full else {})}
            result: dict[str, Any] = client.call("ledger", "ledger_invoke_tool", asked)
            return result

        check_full(door, ledger, "client")
        client.write_code_client("python", tmp_path / "py")
        with generated_modules(tmp_path / "py") as load:
            runtime = load("squeeze_runtime")

            def code_mode(tool: str, arguments: dict[str, Any], full: bool) -> dict[str, Any]:
                result: dict[str, Any] = runtime.call_tool("ledger", tool, arguments, full)["result"]
                return result

            check_full(code_mode, ledger, "code mode")


def test_squeezer_full_answers_the_stored_original_or_says_to_run_the_tool() -> None:
    squeezer = Squeezer(4000)
    runs = {"write_rows": 0, "read_rows": 0}
    annotations: dict[str, dict[str, Any]] = {"write_rows": {}, "read_rows": {"readOnlyHint": True}}

    async def call(tool: str, arguments: dict[str, Any], full: bool) -> dict[str, Any]:
        """As a host does: ask `full` first; run its own tool only when told to."""
        if full:
            answer = await squeezer.full("host", tool, arguments, annotations=annotations[tool])
            if answer is not None:
                return answer
        runs[tool] += 1
        result = {
            "content": [{"type": "text", "text": rows_text(arguments["n"], arguments["tag"], runs[tool])}]
        }
        return await squeezer.present("host", tool, arguments, result, full=full)

    with start_blocking_portal("asyncio") as portal:
        check_full(lambda *asked: portal.call(call, *asked), runs.__getitem__, "squeezer")
    squeezer.close()


def test_full_never_answers_one_tenant_with_anothers_original(tmp_path: Path, ledger: Path) -> None:
    from serve.serve_api import api, write_token

    secret = tmp_path / "secret"
    secret.mkdir(mode=0o700)
    tokens = secret / "tokens"
    write_token(tokens, "alice:" + "a" * 64 + "\nbob:" + "b" * 64 + "\n")
    args = ["--listen", "127.0.0.1:0", "--token-file", str(tokens), "--recovery-dir", str(tmp_path / "rec")]
    with Serve([*args, "--budget", "4000", "-n", "ledger", "--", *LEDGER]) as served:
        call = {"server": "ledger", "tool": "write_rows", "arguments": {"n": BIG, "tag": "tenants"}}
        status, first = api(served.where, "a" * 64, "/v1/call", call)
        assert status == 200 and first["action"] == "shrink"
        status, theirs = api(served.where, "b" * 64, "/v1/call", {**call, "full": True})
        assert (
            status == 200 and theirs["result"]["isError"] is True and "tenants" not in text(theirs["result"])
        )
        status, mine = api(served.where, "a" * 64, "/v1/call", {**call, "full": True})
        assert status == 200 and text(mine["result"]) == rows_text(BIG, "tenants", 1)
    assert calls_of("write_rows", "tenants", ledger) == 1
