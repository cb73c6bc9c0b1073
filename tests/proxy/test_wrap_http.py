"""Streamable HTTP on both sides: the agent-facing frontend and a URL backend, with the real SDK client.

The frontend's features keep spawned tests (shrink and dedup, the token); the foreign Host and the HTTP
backend run the same wrap in this process (memwrap.HttpWrap: the same frontend on a loopback port)."""

from __future__ import annotations

import json
import socket
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx2
import mcp_types as types
import pytest
from mcp import Client
from pydantic import TypeAdapter

from memwrap import HttpWrap
from rawclient import (
    HTTP_ACCEPT,
    HTTP_INITIALIZE,
    RawClient,
    cli,
    demo_server,
    free_port,
    http_proxy,
    text,
    wait_for,
)

RAW: Any = TypeAdapter(dict[str, Any])


@contextmanager
def demo_http_server() -> Iterator[str]:
    port = free_port()
    proc = subprocess.Popen(
        [*demo_server(), "--transport", "streamable-http", "--host", "127.0.0.1", "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_for(lambda: _listening(port), what="demo HTTP server")
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.terminate()
        proc.wait(10)


def _listening(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.2):
            return True
    except OSError:
        return False


@contextmanager
def http_proxy_in_process(
    tmp_path: Path, *target: str, extra: tuple[str, ...] = ()
) -> Iterator[tuple[str, HttpWrap]]:
    """`http_proxy`'s wrap, run in this process (memwrap.HttpWrap); stopped as SIGTERM would."""
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
    with http_proxy(tmp_path, *demo_server()) as (url, _):
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
    with demo_http_server() as backend, http_proxy_in_process(tmp_path, backend) as (url, _):
        got = await _session(url)
    assert text(got["echo"]) == "over http"
    assert "identical to the result of call #3" in text(got["big2"])


def test_http_backend_behind_the_stdio_frontend_equals_the_direct_stdio_server(tmp_path: Path) -> None:
    with RawClient(demo_server()) as direct:
        direct.initialize()
        expected_tools = direct.result("tools/list")["tools"]
        expected_echo = direct.call("echo", {"text": "same"})
        expected_add = direct.call("add", {"a": 5, "b": 6})
    with (
        demo_http_server() as backend,
        RawClient(cli("wrap", "--recovery-dir", str(tmp_path / "r"), "--", backend)) as client,
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
    done = subprocess.run(
        cli("wrap", "--", f"http://127.0.0.1:{port}/mcp"),
        capture_output=True,
        text=True,
        timeout=30,
        stdin=subprocess.PIPE,
    )
    assert done.returncode == 3
    assert "cannot reach the backend" in done.stderr


def test_a_malformed_header_is_a_usage_error(tmp_path: Path) -> None:
    done = subprocess.run(
        cli("wrap", "-H", "no-equals-sign", "--", "http://127.0.0.1:9/mcp"),
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert done.returncode == 2
    assert "KEY=VALUE" in done.stderr


@pytest.mark.anyio
async def test_http_frontend_with_a_token_file_refuses_requests_without_the_token(tmp_path: Path) -> None:
    import stat

    token_file = tmp_path / "auth" / "token"
    accept, initialize = HTTP_ACCEPT, HTTP_INITIALIZE
    with http_proxy(tmp_path, *demo_server(), extra=("--token-file", str(token_file))) as (url, _):
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
