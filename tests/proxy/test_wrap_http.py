"""Streamable HTTP on both sides: the agent-facing frontend and a URL backend, with the real SDK client.

The door's end-to-end test spawns the CLI: a 2026-07-28 client and a 2025-11-25 client use the same
`wrap --transport streamable-http` process at the same time, and both get shrunk results they can
recover. The others run the same wrap in this process (memwrap.HttpWrap: the same frontend on a
loopback port)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx2
import mcp_types as types
import pytest
from mcp import Client
from pydantic import TypeAdapter

from memwrap import HttpWrap, MemoryServer, MemoryWrap, demo_http, run_cli
from rawclient import (
    HTTP_ACCEPT,
    HTTP_INITIALIZE,
    demo_server,
    free_port,
    http_proxy,
    text,
)

RAW: Any = TypeAdapter(dict[str, Any])


@contextmanager
def http_proxy_in_process(
    tmp_path: Path, *target: str, extra: tuple[str, ...] = ()
) -> Iterator[tuple[str, HttpWrap]]:
    """wrap's HTTP frontend in front of `target`, in this process (memwrap.HttpWrap): its URL, and it;
    stopped as SIGTERM would."""
    with HttpWrap(["--recovery-dir", str(tmp_path / "rec"), *extra], target) as wrap:
        yield wrap.url, wrap


async def _session(url: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    async with Client(url, mode="legacy") as client:
        tools = await client.list_tools()
        out["tools"] = sorted(t.name for t in tools.tools)
        out["echo"] = await _raw_call(client, "echo", {"text": "over http"})
        out["add"] = await _raw_call(client, "add", {"a": 1, "b": 2})
        out["big1"] = await _raw_call(client, "search_issues", {"query": "http"})
        out["big2"] = await _raw_call(client, "search_issues", {"query": "http"})
        prompts = await client.list_prompts()
        out["prompts"] = sorted(p.name for p in prompts.prompts)
    return out


async def _raw_call(client: Client, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    request = types.CallToolRequest(params=types.CallToolRequestParams(name=name, arguments=arguments))
    result: dict[str, Any] = await client.session.send_request(request, RAW)
    return result


@pytest.mark.anyio
async def test_http_frontend_serves_the_sdk_client_with_shrink_and_dedup(tmp_path: Path) -> None:
    with http_proxy_in_process(tmp_path, *demo_server()) as (url, _):
        got = await _session(url)
    assert "squeeze_recover" in got["tools"] and "search_issues" in got["tools"]
    assert text(got["echo"]) == "over http"
    assert got["add"]["structuredContent"] == {"a": 1, "b": 2, "sum": 3}
    assert len(text(got["big1"])) <= 20_000
    assert "truncation" in json.loads(got["big1"]["content"][0]["text"])
    assert "identical to the result of call #3" in text(got["big2"])
    assert got["prompts"] == ["summarize_issue", "triage_guide"]


@pytest.mark.anyio
async def test_http_frontend_refuses_a_foreign_host_header(tmp_path: Path) -> None:
    with http_proxy_in_process(tmp_path, *demo_server()) as (url, _):
        async with httpx2.AsyncClient() as http:
            response = await http.post(
                url,
                headers={"Host": "evil.example.com", "Accept": "application/json, text/event-stream"},
                json={"jsonrpc": "2.0", "id": 1, "method": "ping"},
            )
    assert 400 <= response.status_code < 500


@pytest.mark.anyio
async def test_http_backend_and_http_frontend_together(tmp_path: Path) -> None:
    with demo_http() as backend, http_proxy_in_process(tmp_path, backend) as (url, _):
        got = await _session(url)
    assert text(got["echo"]) == "over http"
    assert "identical to the result of call #3" in text(got["big2"])


def test_http_backend_behind_the_stdio_frontend_equals_the_direct_stdio_server(tmp_path: Path) -> None:
    with MemoryServer() as direct:
        direct.initialize()
        expected_tools = direct.result("tools/list")["tools"]
        expected_echo = direct.call("echo", {"text": "same"})
        expected_add = direct.call("add", {"a": 5, "b": 6})
    with (
        demo_http() as backend,
        MemoryWrap(["--recovery-dir", str(tmp_path / "r")], target=[backend]) as client,
    ):
        client.initialize()
        tools = [t for t in client.result("tools/list")["tools"] if t["name"] != "squeeze_recover"]
        echo = client.call("echo", {"text": "same"})
        add = client.call("add", {"a": 5, "b": 6})
        code = client.close()
    assert tools == expected_tools
    assert echo == expected_echo
    assert add == expected_add
    assert code == 0


def test_an_unreachable_url_backend_exits_3_before_serving(tmp_path: Path) -> None:
    port = free_port()
    done = run_cli("wrap", "--", f"http://127.0.0.1:{port}/mcp")
    assert done.returncode == 3
    assert "cannot reach the backend" in done.stderr


def test_a_malformed_header_is_a_usage_error(tmp_path: Path) -> None:
    done = run_cli("wrap", "-H", "no-equals-sign", "--", "http://127.0.0.1:9/mcp")
    assert done.returncode == 2
    assert "KEY=VALUE" in done.stderr


@pytest.mark.anyio
async def test_http_frontend_with_a_token_file_refuses_requests_without_the_token(tmp_path: Path) -> None:
    import stat

    token_file = tmp_path / "auth" / "token"
    accept, initialize = HTTP_ACCEPT, HTTP_INITIALIZE
    with http_proxy_in_process(tmp_path, *demo_server(), extra=("--token-file", str(token_file))) as (url, _):
        token = token_file.read_text().strip()
        async with httpx2.AsyncClient(timeout=30) as http:
            refused = await http.post(url, headers=accept, json=initialize)
            wrong = await http.post(url, headers={**accept, "Authorization": "Bearer nope"}, json=initialize)
            allowed = await http.post(
                url, headers={**accept, "Authorization": f"Bearer {token}"}, json=initialize
            )
    assert refused.status_code == 401 and wrong.status_code == 401
    assert allowed.status_code == 200 and "mcpsqueeze-demo" in allowed.text
    assert stat.S_IMODE(token_file.stat().st_mode) == 0o600 and len(token) == 64


# -- the door's end-to-end test: the spawned CLI, both protocol revisions at once


MODERN = "2026-07-28"
WHOLE = ("--page-size", "100000000")  # the whole original in one answer


async def _shrink_and_recover(url: str, mode: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    async with Client(url, mode=mode) as client:
        out["protocol"] = client.protocol_version
        out["tools"] = sorted(t.name for t in (await client.list_tools()).tools)
        out["echo"] = text(await _raw_call(client, "echo", {"text": f"hello {mode}"}))
        big = await _raw_call(client, "search_issues", {"query": mode})
        notice = json.loads(big["content"][0]["text"])["truncation"]
        out["big_chars"] = len(text(big))
        recovered = await _raw_call(client, "squeeze_recover", {"response_id": notice["response_id"]})
        out["recovered"] = json.loads(text(recovered))
        out["original_chars"] = notice["report"]["original_chars"]
    return out


@pytest.mark.anyio
async def test_a_2026_client_and_a_2025_client_share_one_proxy_over_a_stdio_backend(tmp_path: Path) -> None:
    with http_proxy(tmp_path, *demo_server(), extra=WHOLE) as (url, _):
        results: dict[str, dict[str, Any]] = {}

        async def run(mode: str) -> None:
            results[mode] = await _shrink_and_recover(url, mode)

        async with anyio.create_task_group() as tg:
            tg.start_soon(run, MODERN)
            tg.start_soon(run, "legacy")
    modern, legacy = results[MODERN], results["legacy"]
    assert modern["protocol"] == MODERN and legacy["protocol"] == "2025-11-25"
    for got, mode in ((modern, MODERN), (legacy, "legacy")):
        assert "squeeze_recover" in got["tools"] and "search_issues" in got["tools"]
        assert got["echo"] == f"hello {mode}"
        assert got["big_chars"] <= 20_000
        assert len(json.dumps(got["recovered"])) > 20_000  # the whole original came back
