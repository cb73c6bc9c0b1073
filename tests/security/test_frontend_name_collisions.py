"""A backend tool named like a compressed frontend tool (`<server>_invoke_tool`,
`<server>_get_tool_schema`) under `--compress-tools`: the frontend tools are named clear of the
backend's (`server_invoke_tool_2`), as the recover tool is (`squeeze_recover_2`), so an invoke of the
backend's tool reaches that tool with its arguments, and its arguments are never read as our own invoke
(they named `delete_all`, which then ran). Through wrap over stdio and HTTP (both protocol revisions) and
`Client`."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import anyio
import httpx2
import mcp_types as types
import pytest
from mcp import Client as SdkClient
from mcp.client.streamable_http import streamable_http_client
from pydantic import TypeAdapter

from mcpsqueeze import Client
from mcpsqueeze.core import CompressedTools
from memwrap import HttpWrap, MemoryWrap
from rawclient import text

RAW: Any = TypeAdapter(dict[str, Any])
BACKEND = Path(__file__).parents[1] / "fixtures" / "raw_tools_backend.py"
OBJECT = {"type": "object"}
TOOLS = [
    {"name": "server_invoke_tool", "description": "The backend's own.", "inputSchema": OBJECT},
    {"name": "server_get_tool_schema", "description": "Also the backend's.", "inputSchema": OBJECT},
    {"name": "delete_all", "description": "Deletes everything.", "inputSchema": OBJECT},
]
NESTED = {"tool_name": "delete_all", "tool_input": {}}
# The backend's tool by invoke, the backend's tool called by its own name, the schema of the backend's.
INVOKE = ("server_invoke_tool_2", {"tool_name": "server_invoke_tool", "tool_input": NESTED})
DIRECT = ("server_invoke_tool", NESTED)
SCHEMA = ("server_get_tool_schema_2", {"tool_name": "server_invoke_tool"})


@pytest.fixture
def backend(tmp_path: Path) -> list[str]:
    tools = tmp_path / "tools.json"
    tools.write_text(json.dumps(TOOLS))
    return [sys.executable, str(BACKEND), str(tools)]


def test_frontend_tools_are_named_clear_of_the_backends_tools() -> None:
    tools = CompressedTools.of("server", "max", TOOLS)
    names = [t["name"] for t in tools.listing()]
    assert names == ["server_get_tool_schema_2", "server_invoke_tool_2", "server_list_tools"]
    assert tools.owns("server_invoke_tool_2") and not tools.owns("server_invoke_tool")
    assert CompressedTools.of("server", "max", TOOLS[2:]).invoke_tool == "server_invoke_tool"


def _ran(answer: str) -> tuple[str, Any]:
    """(the backend tool that ran, the arguments it got), from the backend's echo."""
    echoed = json.loads(answer)
    return echoed["tool"], echoed["arguments"]


def _check(listed: list[str], invoked: str, direct: str, schema: str) -> None:
    assert _ran(invoked) == ("server_invoke_tool", NESTED)  # never delete_all
    assert _ran(direct) == ("server_invoke_tool", NESTED)
    assert listed == ["server_get_tool_schema_2", "server_invoke_tool_2", "squeeze_recover"]
    assert schema.startswith("server_invoke_tool(): The backend's own.")


@pytest.mark.parametrize("list_first", [True, False], ids=["listed", "not-listed-yet"])
def test_a_backend_tool_named_like_our_invoke_runs_itself_over_stdio(
    tmp_path: Path, backend: list[str], list_first: bool
) -> None:
    args = ["--recovery-dir", str(tmp_path / "rec"), "--compress-tools", "medium"]
    with MemoryWrap(args, target=backend) as client:
        client.initialize()
        direct = text(client.call(*DIRECT)) if not list_first else ""  # before any listing
        listed = [t["name"] for t in client.result("tools/list")["tools"]]
        invoked = text(client.call(listed[1], INVOKE[1]))  # the invoke tool as listed
        direct = direct or text(client.call(*DIRECT))
        schema = text(client.call(*SCHEMA))
        assert client.close() == 0
    _check(listed, invoked, direct, schema)


async def _over_http(url: str, mode: str) -> tuple[list[str], str, str, str]:
    async with (
        httpx2.AsyncClient(timeout=30) as http,
        SdkClient(streamable_http_client(url, http_client=http), mode=mode) as client,
    ):

        async def call(name: str, arguments: dict[str, Any]) -> str:
            params = types.CallToolRequestParams(name=name, arguments=arguments)
            return text(await client.session.send_request(types.CallToolRequest(params=params), RAW))

        direct = await call(*DIRECT)  # before this client lists
        listed = await client.session.send_request(types.ListToolsRequest(), RAW)
        names = [t["name"] for t in listed["tools"]]
        return names, await call(names[1], INVOKE[1]), direct, await call(*SCHEMA)


@pytest.mark.anyio
@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_a_backend_tool_named_like_our_invoke_runs_itself_over_http(
    tmp_path: Path, backend: list[str], mode: str
) -> None:
    args = ["--recovery-dir", str(tmp_path / "rec"), "--compress-tools", "medium"]
    with HttpWrap(args, backend) as wrap:
        with anyio.fail_after(60):
            _check(*await _over_http(wrap.url, mode))
    assert "Traceback" not in wrap.stderr


def test_a_backend_tool_named_like_our_invoke_runs_itself_through_client(backend: list[str]) -> None:
    servers = {"server": {"command": backend[0], "args": backend[1:]}}
    with Client(servers, compress_tools="medium") as client:
        listed = [t["name"] for t in client.tools["server"]]
        invoked, direct, schema = (text(client.call("server", *call)) for call in (INVOKE, DIRECT, SCHEMA))
        functions = [f.__name__ for f in client.to_functions()]
    _check([*listed, "squeeze_recover"], invoked, direct, schema)
    assert functions == [*listed, "squeeze_recover"]
