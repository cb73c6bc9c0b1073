"""An invoke's check against its tool's schema (`--compress-tools`) costs time linear in the input and
says a bounded amount: 20,000 unknown keys against a tool with 300 required arguments (a close-match
search per missing name against every given key would be quadratic) are refused at once, naming the
first problems and counting the rest, and a request sent meanwhile is answered."""

from __future__ import annotations

import json
import sys
import threading
import time
from pathlib import Path
from typing import Any

import anyio
import httpx2
import mcp_types as types
import pytest
from mcp import Client as SdkClient
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from pydantic import TypeAdapter

from hostile_inputs import CLOSED, HOSTILE_INPUT, REQUIRED, WIDE
from mcpsqueeze import Client, UsageError
from mcpsqueeze.core._compressed import INVALID_PARAMS, CompressedToolError, CompressedTools
from memwrap import HttpWrap, MemoryWrap

RAW: Any = TypeAdapter(dict[str, Any])
BACKEND = Path(__file__).parents[1] / "fixtures" / "raw_tools_backend.py"


def _refusal(tool: dict[str, Any], tool_input: dict[str, Any]) -> tuple[str, float]:
    tools = CompressedTools.of("server", "medium", [tool])
    started = time.monotonic()
    with pytest.raises(CompressedToolError) as refused:
        tools.invoke({"tool_name": tool["name"], "tool_input": tool_input})
    assert refused.value.code == INVALID_PARAMS
    return refused.value.message, time.monotonic() - started


@pytest.mark.parametrize(("tool", "more"), [(WIDE, "290"), (CLOSED, "20,290")], ids=["open", "closed"])
def test_an_invoke_with_20000_unknown_keys_against_300_required_arguments_is_refused_at_once(
    tool: dict[str, Any], more: str
) -> None:
    message, seconds = _refusal(tool, HOSTILE_INPUT)
    assert seconds < 0.5, seconds
    assert message.startswith("validation error: ") and "missing argument_0 (given argument_0_x?)" in message
    assert f"; and {more} more. " in message and len(message) < 25_000  # the schema hint is ~22,000


def test_a_few_problems_are_all_named_with_their_close_matches() -> None:
    message, _ = _refusal(CLOSED, {"argument_1x": "v", **{n: "v" for n in REQUIRED[2:]}})
    assert "missing argument_1 (given argument_1x?)" in message and "missing argument_0" in message
    assert "unknown argument argument_1x (did you mean argument_1?)" in message and "more" not in message


def test_a_ping_is_answered_while_wrap_refuses_a_hostile_invoke(tmp_path: Path) -> None:
    tools = tmp_path / "tools.json"
    tools.write_text(json.dumps([WIDE, CLOSED]))
    args = ["--recovery-dir", str(tmp_path / "rec"), "--compress-tools", "medium"]
    with MemoryWrap(args, target=[sys.executable, str(BACKEND), str(tools)]) as client:
        client.initialize()
        client.result("tools/list")
        pings: list[float] = []
        arguments = {"tool_name": "closed", "tool_input": HOSTILE_INPUT}

        def ping() -> None:
            started = time.monotonic()
            client.request("ping", {}, timeout=60)
            pings.append(time.monotonic() - started)

        pinger = threading.Thread(target=ping)
        invoked = time.monotonic()
        client.send(
            {
                "jsonrpc": "2.0",
                "id": "hostile",
                "method": "tools/call",
                "params": {"name": "server_invoke_tool", "arguments": arguments},
            }
        )
        pinger.start()
        refused = client.wait_response("hostile", 60)
        seconds = time.monotonic() - invoked
        pinger.join(60)
        assert client.close() == 0
    assert refused["error"]["code"] == INVALID_PARAMS
    assert seconds < 2 and pings and pings[0] < 2, (seconds, pings)
    assert "Traceback" not in client.stderr


async def _refused_over_http(url: str, mode: str) -> tuple[dict[str, Any], float]:
    """A client of protocol `mode` sends the hostile invoke while another lists the tools: the
    refusal's error, and how long the listing waited."""
    async with (
        httpx2.AsyncClient(timeout=60) as http,
        SdkClient(streamable_http_client(url, http_client=http), mode=mode) as client,
        SdkClient(url, mode=mode) as other,
    ):
        await client.session.send_request(types.ListToolsRequest(), RAW)
        arguments = {"tool_name": "closed", "tool_input": HOSTILE_INPUT}
        params = types.CallToolRequestParams(name="server_invoke_tool", arguments=arguments)
        found: dict[str, Any] = {}

        async def invoke() -> None:
            try:
                await client.session.send_request(types.CallToolRequest(params=params), RAW)
            except MCPError as exc:
                found["error"] = {"code": exc.code, "message": exc.message}

        async with anyio.create_task_group() as tg:
            tg.start_soon(invoke)
            started = time.monotonic()
            await other.session.send_request(types.ListToolsRequest(), RAW)
            waited = time.monotonic() - started
        return found["error"], waited


@pytest.mark.anyio
@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_over_http_a_hostile_invoke_is_refused_and_other_clients_are_answered(
    tmp_path: Path, mode: str
) -> None:
    tools = tmp_path / "tools.json"
    tools.write_text(json.dumps([WIDE, CLOSED]))
    args = ["--recovery-dir", str(tmp_path / "rec"), "--compress-tools", "medium"]
    with HttpWrap(args, [sys.executable, str(BACKEND), str(tools)]) as wrap, anyio.fail_after(60):
        error, waited = await _refused_over_http(wrap.url, mode)
    assert error["code"] == INVALID_PARAMS and "; and 20,290 more. " in error["message"]
    assert waited < 2, waited  # the SDK clients share this process: no finer bound here (see the stdio one)
    assert "Traceback" not in wrap.stderr


def test_client_refuses_a_hostile_invoke_with_a_usage_error(tmp_path: Path) -> None:
    tools = tmp_path / "tools.json"
    tools.write_text(json.dumps([WIDE, CLOSED]))
    servers = {"raw": {"command": sys.executable, "args": [str(BACKEND), str(tools)]}}
    with Client(servers, compress_tools="medium") as client:
        started = time.monotonic()
        with pytest.raises(UsageError, match=r"; and 20,290 more\. "):
            client.call("raw", "raw_invoke_tool", {"tool_name": "closed", "tool_input": HOSTILE_INPUT})
        assert time.monotonic() - started < 2
