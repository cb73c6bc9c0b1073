"""Client: MCP servers (the bundled demo, npm server-filesystem) through the proxy's pipeline.

The Client's end-to-end test spawns its backends over stdio (a servers JSON file, and a command that
cannot start); the tests of the Client's own methods run the demo server in this process (conftest:
in_memory_parts), over stdio pipes or streamable HTTP."""

from __future__ import annotations

import inspect
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from mcpsqueeze import BackendError, Client, RecoveryError, ToolError, UsageError
from memwrap import demo_http
from rawclient import require_node_paths

DEMO = {"demo": {"command": sys.executable, "args": ["-m", "mcpsqueeze.demo.server"]}}


def text(result: dict[str, Any]) -> str:
    return "".join(b["text"] for b in result["content"] if b.get("type") == "text")


def record(result: dict[str, Any]) -> dict[str, Any]:
    meta = result["_meta"]
    assert isinstance(meta["truncation"], dict)
    return meta["truncation"]


def test_with_client_calls_shrinks_dedups_and_recovers_by_id_pointer_and_window() -> None:
    with Client(DEMO, budget=4000) as client:
        assert "search_issues" in [t["name"] for t in client.tools["demo"]]
        args = {"query": "bug", "limit": 200}
        first = client.call("demo", "search_issues", args)
        assert len(text(first)) <= 4000
        rid = record(first)["response_id"]
        original = client.recover(rid)
        document = json.loads(original)
        assert len(document["issues"]) == 200 and len(original) > 4000
        assert client.recover(rid, pointer="/issues/17") == json.dumps(
            document["issues"][17], ensure_ascii=False, separators=(",", ":")
        )  # a JSON node comes back as compact JSON, as previews show JSON
        assert client.recover(rid, offset=100, length=50) == original[100:150]

        again = client.call("demo", "search_issues", args)
        pointer = record(again)
        assert "identical to the result of call #1 (search_issues)" in pointer["message"]
        assert client.recover(pointer["response_id"]) == original

        full = client.call("demo", "search_issues", args, full=True)
        assert text(full) == original  # the original cached from the first call
        assert "truncation" not in (full.get("_meta") or {})


def test_full_true_runs_a_tool_never_seen_once_unshrunk() -> None:
    with Client(DEMO, budget=4000) as client:
        full = client.call("demo", "read_file", {"path": "notes.md"}, full=True)
        assert len(text(full)) > 50_000
        assert "truncation" not in (full.get("_meta") or {})
        shrunk = client.call("demo", "read_file", {"path": "notes.md"})
        assert len(text(shrunk)) <= 4000 and client.recover(record(shrunk)["response_id"]) == text(full)


@pytest.mark.anyio
async def test_async_with_gives_the_same_methods_as_coroutines() -> None:
    async with Client(DEMO, budget=4000) as client:
        presented = await client.call("demo", "list_rows", {"table": "t", "n": 300})
        rid = record(presented)["response_id"]
        rows = json.loads(await client.recover(rid))
        assert len(rows) == 300
        assert await client.recover(rid, pointer="/0") == json.dumps(
            rows[0], ensure_ascii=False, separators=(",", ":")
        )
        functions = client.to_functions()
        echo = next(f for f in functions if f.__name__ == "demo_echo")
        assert inspect.iscoroutinefunction(echo)
        assert await echo(text="hi") == "hi"


def test_to_functions_gives_named_documented_callables_with_schemas() -> None:
    with Client(DEMO, budget=4000) as client:
        functions = {f.__name__: f for f in client.to_functions()}
        search = functions["demo_search_issues"]
        assert search.__doc__ and "issue tracker" in search.__doc__
        assert search.schema["required"] == ["query"]  # type: ignore[attr-defined]
        assert list(inspect.signature(search).parameters) == ["query", "limit"]
        preview = search(query="x", limit=200)
        rid = json.loads(preview)["truncation"]["response_id"]
        assert len(json.loads(functions["squeeze_recover"](response_id=rid))["issues"]) == 200
        with pytest.raises(ToolError, match=r"demo\.fail failed"):
            functions["demo_fail"]()


def test_unknown_servers_tools_and_ids_are_explicit_errors() -> None:
    with Client(DEMO) as client:
        with pytest.raises(UsageError, match="no server named 'nope'"):
            client.call("nope", "echo", {})
        with pytest.raises(UsageError, match="has no tool 'nope'"):
            client.call("demo", "nope", {})
        with pytest.raises(RecoveryError, match="Unknown response id"):
            client.recover("0" * 32)


def test_a_server_that_cannot_start_fails_the_with_clearly() -> None:
    with (
        pytest.raises(BackendError, match="'broken' is not available"),
        Client({"broken": {"command": "/nonexistent/server"}}),
    ):
        pass  # pragma: no cover


@pytest.mark.real_processes  # the Client's stdio backends, spawned as a user's would be
def test_a_servers_json_file_works_like_the_dict(tmp_path: Path) -> None:
    config = tmp_path / "servers.json"
    config.write_text(json.dumps({"mcpServers": DEMO}))
    with Client(config) as client:
        assert json.loads(text(client.call("demo", "add", {"a": 2, "b": 3})))["sum"] == 5
    with pytest.raises(UsageError, match="mcpServers"):
        Client({"mcpServers": {}})


@pytest.mark.slow  # npm server-filesystem: a public server
def test_server_filesystem_through_the_client(tmp_path: Path) -> None:
    paths = require_node_paths("NODE22", "FILESYSTEM_JS")
    root = tmp_path / "files"
    root.mkdir()
    body = "".join(f"line {i} of text\n" for i in range(6000))
    (root / "big.txt").write_text(body)
    servers = {"fs": {"command": paths["NODE22"], "args": [paths["FILESYSTEM_JS"], str(root)]}}
    with Client(servers, budget=5000) as client:
        args = {"path": str(root / "big.txt")}
        first = client.call("fs", "read_text_file", args)
        assert len(text(first)) <= 5000
        assert first["structuredContent"] == {"content": body}  # never modified
        rid = record(first)["response_id"]
        assert client.recover(rid) == body
        assert client.recover(rid, pointer="/content") == body  # text is not JSON: structuredContent
        assert client.recover(rid, offset=7, length=9) == body[7:16]
        again = client.call("fs", "read_text_file", args)
        assert client.recover(record(again)["response_id"]) == body
        assert text(client.call("fs", "read_text_file", args, full=True)) == body


def test_a_streamable_http_server_and_a_stdio_server_in_one_client() -> None:
    with demo_http() as url:
        servers = {**DEMO, "web": {"url": url, "headers": {"X-Test": "1"}}}
        with Client(servers, budget=4000) as client:
            assert set(client.tools) == {"demo", "web"}
            over_http = client.call("web", "search_issues", {"query": "http", "limit": 100})
            rid = record(over_http)["response_id"]
            assert len(json.loads(client.recover(rid))["issues"]) == 100
            # dedup spans the client's servers: the same content from the stdio server is a pointer
            same = client.call("demo", "search_issues", {"query": "http", "limit": 100})
            assert "identical to the result of call #1" in record(same)["message"]


def test_client_recover_projects_the_original_with_a_jmespath_query() -> None:
    with Client(DEMO, budget=4000) as client:
        shrunk = client.call("demo", "search_issues", {"query": "bug", "limit": 50})
        rid = record(shrunk)["response_id"]
        assert json.loads(client.recover(rid, query="issues[].number")) == list(range(1000, 1050))
        with pytest.raises(UsageError, match="not valid JMESPath"):
            client.recover(rid, query="issues[")
