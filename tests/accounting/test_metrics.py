"""GET /metrics (Prometheus) on wrap's HTTP frontend and serve's TCP API, scraped during real sessions."""

from __future__ import annotations

import json
import re
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from mcpsqueeze.accounting._metrics import MAX_LABEL_CHARS, Metrics
from mcpsqueeze.accounting._stats import CallRecord
from memwrap import HttpWrap, Serve
from rawclient import demo_server, wait_for

SAMPLE = re.compile(r"^([a-z_]+)(\{[^}]*\})? (\S+)$")


def scrape(url: str, token: str | None = None, host: str | None = None) -> tuple[int, dict[str, float]]:
    request = urllib.request.Request(url)
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    if host:
        request.add_header("Host", host)
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            body = response.read().decode()
            status = response.status
    except urllib.error.HTTPError as exc:
        return exc.code, {}
    samples: dict[str, float] = {}
    for line in body.splitlines():
        match = SAMPLE.match(line)
        if match:
            samples[match[1] + (match[2] or "")] = float(match[3])
    return status, samples


def _key(name: str, server: str, tool: str, **extra: str) -> str:
    labels = {"server": server, "tool": tool, **extra}
    return name + "{" + ",".join(f'{k}="{v}"' for k, v in sorted(labels.items())) + "}"


@contextmanager
def wrap_http(tmp_path: Path, *extra: str) -> Iterator[str]:
    """wrap's HTTP frontend in front of the demo server: its base URL."""
    with HttpWrap(["--recovery-dir", str(tmp_path / "rec"), *extra], demo_server()) as door:
        yield door.url.removesuffix("/mcp")


@pytest.mark.anyio
async def test_wrap_http_metrics_need_the_token_and_move_during_a_session(tmp_path: Path) -> None:
    token_file = tmp_path / "auth" / "token"
    with wrap_http(tmp_path, "--token-file", str(token_file), "--budget", "2000") as base:
        token = token_file.read_text().strip()
        assert scrape(f"{base}/metrics")[0] == 401
        assert scrape(f"{base}/metrics", token, host="evil.example.com")[0] == 421
        status, before = scrape(f"{base}/metrics", token)
        assert status == 200
        assert _key("mcpsqueeze_shrunk_total", "backend", "list_rows") not in before
        # a named conversation: 2026-07-28 stateless calls are deduplicated only within one
        headers = {"Authorization": f"Bearer {token}", "Mcpsqueeze-Conversation": "metrics-test"}
        http = httpx2.AsyncClient(headers=headers, timeout=30)
        async with http, Client(streamable_http_client(f"{base}/mcp", http_client=http)) as client:
            shrunk = await client.call_tool("list_rows", {"table": "t"})
            await client.call_tool("list_rows", {"table": "t"})
            rid = (shrunk.meta or {})["truncation"]["response_id"]
            await client.call_tool("squeeze_recover", {"response_id": rid})

            def moved() -> dict[str, float] | None:
                samples = scrape(f"{base}/metrics", token)[1]
                return (
                    samples
                    if samples.get(_key("mcpsqueeze_recovered_total", "backend", "list_rows"))
                    else None
                )

            during = wait_for(moved, what="the recovery to be counted")  # still inside the session
    assert during[_key("mcpsqueeze_calls_total", "backend", "list_rows", action="shrink")] == 1
    assert during[_key("mcpsqueeze_calls_total", "backend", "list_rows", action="dedup")] == 1
    assert during[_key("mcpsqueeze_shrunk_total", "backend", "list_rows")] == 1
    assert during[_key("mcpsqueeze_deduplicated_total", "backend", "list_rows")] == 1
    tokens_before = during[_key("mcpsqueeze_tokens_before_total", "backend", "list_rows")]
    tokens_after = during[_key("mcpsqueeze_tokens_after_total", "backend", "list_rows")]
    assert tokens_before > 2 * tokens_after > 0
    assert during[_key("mcpsqueeze_added_latency_seconds_count", "backend", "list_rows")] == 2
    assert during[_key("mcpsqueeze_call_latency_seconds_count", "backend", "list_rows")] == 2
    call_seconds = during[_key("mcpsqueeze_call_latency_seconds_sum", "backend", "list_rows")]
    assert call_seconds >= during[_key("mcpsqueeze_added_latency_seconds_sum", "backend", "list_rows")] > 0
    assert during.get(_key("mcpsqueeze_store_failures_total", "backend", "list_rows"), 0) == 0


def test_serve_tcp_metrics_need_the_token_and_count_shim_calls(tmp_path: Path) -> None:
    token_file = tmp_path / "tok" / "token"
    args = [
        "--recovery-dir", str(tmp_path / "rec"), "--budget", "4000", "--listen", "127.0.0.1:0",
        "--token-file", str(token_file), "-n", "demo", "--", *demo_server(),
    ]  # fmt: skip
    with Serve(args) as served:
        token = token_file.read_text().strip()
        base = served.where
        assert scrape(f"{base}/metrics")[0] == 401

        def post(path: str, body: dict[str, Any]) -> Any:
            request = urllib.request.Request(f"{base}{path}", data=json.dumps(body).encode(), method="POST")
            request.add_header("Authorization", f"Bearer {token}")
            with urllib.request.urlopen(request, timeout=30) as response:
                return json.load(response)

        answer = post("/v1/call", {"server": "demo", "tool": "search_issues", "arguments": {"query": "x"}})
        request = urllib.request.Request(f"{base}/v1/recover/{answer['response_id']}")
        request.add_header("Authorization", f"Bearer {token}")
        urllib.request.urlopen(request, timeout=30).close()

        def counted() -> dict[str, float] | None:
            samples = scrape(f"{base}/metrics", token)[1]
            return (
                samples if samples.get(_key("mcpsqueeze_recovered_total", "demo", "search_issues")) else None
            )

        samples = wait_for(counted, what="the recovery to be counted")
    assert answer["action"] == "shrink"
    assert samples[_key("mcpsqueeze_shrunk_total", "demo", "search_issues")] == 1
    assert (
        samples[_key("mcpsqueeze_tokens_before_total", "demo", "search_issues")]
        > samples[_key("mcpsqueeze_tokens_after_total", "demo", "search_issues")]
    )


def test_labels_hold_only_capped_server_and_tool_names() -> None:
    metrics = Metrics()
    for i in range(300):
        metrics.on_call(CallRecord(f"tool-{i}", i, "passthrough", "a", "a", 0.1, server="s"), 1, 1)
    metrics.on_call(CallRecord("t" * 500, 1, "passthrough", "secret argument", "x", 0.1, server="s"), 1, 1)
    text = metrics.render()[0].decode()
    assert "secret" not in text
    tools = set(re.findall(r'tool="([^"]*)"', text))
    assert len(tools) <= 257 and "other" in tools
    assert max(len(t) for t in tools) <= MAX_LABEL_CHARS


def test_the_metrics_say_whose_model_view_the_tokens_are_of() -> None:
    metrics = Metrics()
    seen = CallRecord(
        "read", 1, "shrink", "a", "b", 0.1, server="fs", client="claude-code", seen="structuredContent"
    )
    metrics.on_call(seen, 10, 2)
    metrics.on_call(CallRecord("read", 2, "passthrough", "a", "a", 0.1, server="fs"), 1, 1)
    text = metrics.render()[0].decode()
    views = (
        'mcpsqueeze_views_total{client="claude-code",seen="structuredContent",server="fs",tool="read"} 1.0'
    )
    assert views in text
    assert 'mcpsqueeze_views_total{client="none",seen="text",server="fs",tool="read"} 1.0' in text
