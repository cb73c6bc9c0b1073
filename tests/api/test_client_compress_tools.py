"""`Client(compress_tools=...)`: the Python API's tools in mcp-compressor's standard mode, per
client or per server entry, over the real demo server, through the same pipeline as plain calls."""

from __future__ import annotations

import json
import sys
from typing import Any

import pytest

from mcpsqueeze import Client, UsageError

SERVER = {"command": sys.executable, "args": ["-m", "mcpsqueeze.demo.server"]}


def text(result: dict[str, Any]) -> str:
    return "".join(b["text"] for b in result["content"] if b.get("type") == "text")


def test_the_client_lists_the_compressed_tools_and_invoke_goes_through_the_pipeline() -> None:
    with Client({"demo": SERVER}, compress_tools="max", config=False) as client:
        assert [t["name"] for t in client.tools["demo"]] == [
            "demo_get_tool_schema",
            "demo_invoke_tool",
            "demo_list_tools",
        ]
        schema = client.call("demo", "demo_get_tool_schema", {"tool_name": "echo"})
        assert text(schema).startswith("echo(text: string):")
        assert "search_issues(query: string, limit?: integer):" in text(
            client.call("demo", "demo_list_tools")
        )
        args = {"tool_name": "search_issues", "tool_input": {"query": "bug"}}
        shrunk = client.call("demo", "demo_invoke_tool", args)
        rid = shrunk["_meta"]["truncation"]["response_id"]
        full = client.call("demo", "demo_invoke_tool", {**args, "full": True})
        assert len(text(full)) > len(text(shrunk)) and text(full) == client.recover(rid)
        again = client.call(
            "demo", "demo_invoke_tool", {"tool_name": "squeeze_recover", "tool_input": {"response_id": rid}}
        )
        assert text(again) == text(full)
        with pytest.raises(
            UsageError, match=r'tool not found: "serch_issues"\. Close matches: search_issues'
        ):
            client.call("demo", "demo_invoke_tool", {"tool_name": "serch_issues", "tool_input": {}})
        names = [f.__name__ for f in client.to_functions()]
    assert names == ["demo_get_tool_schema", "demo_invoke_tool", "demo_list_tools", "squeeze_recover"]


def test_a_server_entrys_own_level_wins_over_the_clients() -> None:
    servers = {"a": {**SERVER, "compress_tools": "medium"}, "b": {**SERVER, "compress_tools": False}}
    with Client(servers, compress_tools="high", config=False) as client:
        listed = client.tools
    assert [t["name"] for t in listed["a"]] == ["a_get_tool_schema", "a_invoke_tool"]
    assert "echo(text: string):" in listed["a"][0]["description"]  # medium, not high
    assert "search_issues" in [t["name"] for t in listed["b"]]  # off: the tools as they are
    with pytest.raises(UsageError, match="compress_tools must be one of off, low, medium, high, max"):
        Client({"a": {**SERVER, "compress_tools": "tiny"}}, config=False)
    assert json.dumps(servers)  # unchanged input
