"""A backend whose tools' input schemas nest as deep as JSON-RPC lets them (anyOf 400 deep, items 1,000
deep: within the proxy's 1,024-level parse limit), through every door that lists tools: the compressed
listing of wrap over stdio and over HTTP (both protocol revisions), serve with `mcpsq`, and `Client`
(its listing, compressed listing and Code Mode). Each lists, shows the schema, refuses bad input and
calls the tool; none crashes or prints a traceback, and the next request is answered."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import httpx2
import mcp_types as types
import pytest
from mcp import Client as SdkClient
from mcp.client.streamable_http import streamable_http_client
from pydantic import TypeAdapter

from hostile_inputs import deep_anyof, deep_items, tool_text
from mcpsqueeze import Client
from memwrap import HttpWrap, MemoryWrap, Serve, mcpsq
from rawclient import text

RAW: Any = TypeAdapter(dict[str, Any])
BACKEND = Path(__file__).parents[1] / "fixtures" / "raw_tools_backend.py"
ITEMS_DEPTH = 1000


@pytest.fixture(scope="module")
def deep_backend(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    """The backend command: tools `deep_anyof`, `deep_items` and `plain`, listed byte for byte."""
    tools = tmp_path_factory.mktemp("deep") / "tools.json"
    listed = [tool_text("deep_anyof", deep_anyof(400)), tool_text("deep_items", deep_items(ITEMS_DEPTH))]
    tools.write_text("[" + ",".join([*listed, tool_text("plain", '{"type":"string"}')]) + "]")
    return [sys.executable, str(BACKEND), str(tools)]


def test_listing_of_a_400_deep_anyof_schema_does_not_crash_wrap(
    tmp_path: Path, deep_backend: list[str]
) -> None:
    args = ["--recovery-dir", str(tmp_path / "rec"), "--compress-tools", "medium"]
    with MemoryWrap(args, target=deep_backend) as client:
        client.initialize()
        listed = client.result("tools/list")["tools"]
        schema = client.call("server_get_tool_schema", {"tool_name": "deep_items"})
        refused = client.request(
            "tools/call",
            {"name": "server_invoke_tool", "arguments": {"tool_name": "deep_items", "tool_input": 3}},
        )
        called = client.call("server_invoke_tool", {"tool_name": "deep_anyof", "tool_input": {"x": "a"}})
        assert client.request("ping", {}) == {"jsonrpc": "2.0", "id": 6, "result": {}}
        code = client.close()
    assert code == 0 and "Traceback" not in client.stderr, client.stderr
    signatures = listed[0]["description"].splitlines()[1:]
    assert signatures[0] == "deep_anyof(x?: any): d"  # past the depth read, a type is `any`
    assert signatures[1].startswith("deep_items(x?: any[][]") and len(signatures[1]) < 80
    head, _, body = text(schema).partition("\n\n")
    assert (
        head.startswith("deep_items(")
        and body == f'{{"type":"object","properties":{{"x":{deep_items(ITEMS_DEPTH)}}}}}'
    )
    assert refused["error"]["code"] == -32602 and "takes tool_input matching" in refused["error"]["message"]
    assert json.loads(text(called)) == {"tool": "deep_anyof", "arguments": {"x": "a"}}


async def _over_http(url: str, mode: str) -> dict[str, Any]:
    """What a client of protocol `mode` gets: the listing's names, the deep schema's answer, a call."""

    async def send(client: SdkClient, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        params = types.CallToolRequestParams(name=name, arguments=arguments)
        result: dict[str, Any] = await client.session.send_request(types.CallToolRequest(params=params), RAW)
        return result

    async with (
        httpx2.AsyncClient(timeout=30) as http,
        SdkClient(streamable_http_client(url, http_client=http), mode=mode) as client,
    ):
        listed = await client.session.send_request(types.ListToolsRequest(), RAW)
        return {
            "protocol": client.protocol_version,
            "tools": [t["name"] for t in listed["tools"]],
            "schema": text(await send(client, "server_get_tool_schema", {"tool_name": "deep_items"})),
            "called": text(
                await send(client, "server_invoke_tool", {"tool_name": "plain", "tool_input": {"x": mode}})
            ),
        }


@pytest.mark.anyio
async def test_a_deep_schema_listing_over_http_answers_both_protocol_revisions_and_the_next_session(
    tmp_path: Path, deep_backend: list[str]
) -> None:
    args = ["--recovery-dir", str(tmp_path / "rec"), "--compress-tools", "medium"]
    with HttpWrap(args, deep_backend) as wrap:
        results = {}
        for mode in ("2026-07-28", "legacy", "legacy"):  # the last: a new session after the others
            started = time.monotonic()
            with anyio.fail_after(30):
                results[mode] = await _over_http(wrap.url, mode)
            results[mode]["seconds"] = time.monotonic() - started
        assert wrap.poll() is None
    assert "Traceback" not in wrap.stderr, wrap.stderr
    assert results["2026-07-28"]["protocol"] == "2026-07-28"
    for mode, got in results.items():
        assert got["tools"] == ["server_get_tool_schema", "server_invoke_tool", "squeeze_recover"], mode
        assert got["schema"].startswith("deep_items(x?: any[]") and json.loads(got["called"])[
            "arguments"
        ] == {"x": mode}
    assert results["legacy"]["seconds"] < 10  # the new session's initialize is not left waiting


def test_mcpsq_lists_and_calls_the_tools_of_a_backend_with_deep_schemas(
    tmp_path: Path, deep_backend: list[str]
) -> None:
    sock = tmp_path / "run" / "s.sock"
    with Serve(
        ["--socket", str(sock), "--recovery-dir", str(tmp_path / "rec"), "-n", "raw", "--", *deep_backend]
    ):
        env = {k: v for k, v in os.environ.items() if not k.startswith("MCPSQUEEZE_")}
        env["MCPSQUEEZE_SOCKET"] = str(sock)

        asks = [["raw"], ["raw", "deep-items", "--help"], ["raw", "deep-items", "--x", "[[]]"]]
        runs = [mcpsq(argv, env) for argv in [*asks, ["raw", "deep-anyof", "--x", '"a"']]]
    for done in runs:
        assert done.returncode == 0 and "Traceback" not in done.stderr, done
    assert "deep-items" in runs[0].stdout and "--x ARRAY" in runs[1].stdout
    assert json.loads(runs[2].stdout) == {"tool": "deep_items", "arguments": {"x": [[]]}}
    assert json.loads(runs[3].stdout) == {"tool": "deep_anyof", "arguments": {"x": "a"}}


@pytest.mark.parametrize("level", ["off", "medium"])
def test_client_lists_writes_code_mode_and_calls_the_tools_of_deep_schemas(
    tmp_path: Path, deep_backend: list[str], level: str
) -> None:
    servers = {"raw": {"command": deep_backend[0], "args": deep_backend[1:]}}
    with Client(servers, compress_tools=level) as client:
        names = [t["name"] for t in client.tools["raw"]]
        functions = [f.__name__ for f in client.to_functions()]
        written = [client.write_code_client(lang, tmp_path / lang) for lang in ("python", "typescript")]
        if level == "off":
            called = client.call("raw", "deep_items", {"x": [[]]})
        else:
            args = {"tool_name": "deep_items", "tool_input": {"x": [[]]}}
            called = client.call("raw", "raw_invoke_tool", args)
    assert len(names) == (3 if level == "off" else 2) and len(functions) == len(names) + 1
    assert all(len(paths) == 2 for paths in written)
    assert json.loads(text(called)) == {"tool": "deep_items", "arguments": {"x": [[]]}}
