"""MCP 2026-07-28 (stateless streamable HTTP) through the HTTP frontend, with the SDK's own client; wrap
runs in this process (memwrap.HttpWrap). (A 2026-07-28 and a 2025-11-25 client sharing one spawned wrap:
test_wrap_http.py; a 2026-07-28 client over stdio: test_wrap_stdio.py.)
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import anyio
import httpx2
import mcp_types as types
import pytest
from mcp import Client
from pydantic import TypeAdapter
from test_wrap_http import _shrink_and_recover, http_proxy_in_process

from memwrap import demo_http
from rawclient import demo_server, text

RAW: Any = TypeAdapter(dict[str, Any])
MODERN = "2026-07-28"

# These tests recover whole originals in one answer; pages are tested in tests/core/test_recover_pages.py.
WHOLE = ("--page-size", "100000000")


async def _raw_call(client: Client, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    request = types.CallToolRequest(params=types.CallToolRequestParams(name=name, arguments=arguments))
    result: dict[str, Any] = await client.session.send_request(request, RAW)
    return result


@pytest.mark.anyio
async def test_a_2026_client_through_the_proxy_to_a_2026_http_backend(tmp_path: Path) -> None:
    with demo_http() as backend, http_proxy_in_process(tmp_path, backend, extra=WHOLE) as (url, _):
        got = await _shrink_and_recover(url, MODERN)
    assert got["protocol"] == MODERN
    assert got["echo"] == f"hello {MODERN}"
    assert got["big_chars"] <= 20_000 < len(json.dumps(got["recovered"]))


@pytest.mark.anyio
async def test_a_2026_request_without_the_envelope_is_refused_with_a_clear_error(tmp_path: Path) -> None:
    headers = {
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": MODERN,
        "Mcp-Method": "tools/list",
    }
    with http_proxy_in_process(tmp_path, *demo_server(), extra=WHOLE) as (url, _):
        async with httpx2.AsyncClient(timeout=30) as http:
            response = await http.post(
                url, headers=headers, json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
            )
    assert response.status_code == 400
    assert "envelope" in response.json()["error"]["message"]


@pytest.mark.anyio
async def test_a_stdio_backends_elicitation_reaches_the_2026_client_as_input_required_and_its_retry(
    tmp_path: Path,
) -> None:
    """MRTR through the shared connection: the proxy holds the backend's call open across the retry."""
    asked: list[str] = []

    async def answer(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(params.message)
        return types.ElicitResult(action="accept", content={"answer": "forty-two"})

    with http_proxy_in_process(tmp_path, *demo_server(), extra=WHOLE) as (url, _):
        async with Client(url, mode=MODERN, elicitation_callback=answer) as client:
            called = await client.call_tool("ask_user", {"question": "What is the answer?"})
            result = called.model_dump(by_alias=True, mode="json", exclude_none=True)
            again = await _raw_call(client, "echo", {"text": "still serving"})
    assert asked == ["What is the answer?"]
    assert text(result) == "forty-two"
    assert text(again) == "still serving"


@pytest.mark.anyio
async def test_subscriptions_listen_carries_a_stdio_backends_change_notifications(tmp_path: Path) -> None:
    backend = [sys.executable, str(Path(__file__).parents[1] / "fixtures" / "notifying_backend.py")]
    events: list[Any] = []
    with http_proxy_in_process(tmp_path, *backend) as (url, _):
        async with (
            Client(url, mode=MODERN) as client,
            client.listen(tools_list_changed=True, resource_subscriptions=["test://a"]) as sub,
        ):
            honored = sub.honored
            await _raw_call(client, "touch", {})
            with anyio.fail_after(20):
                async for event in sub:
                    events.append(event)
                    if len(events) == 2:
                        break
    assert honored.tools_list_changed is True and honored.resource_subscriptions == ["test://a"]
    kinds = sorted(type(e).__name__ for e in events)
    assert len(kinds) == 2, kinds
    assert any("Resource" in k for k in kinds) and any("Tool" in k for k in kinds), kinds


@pytest.mark.anyio
async def test_a_backend_tool_named_squeeze_recover_renames_ours_before_any_listing(tmp_path: Path) -> None:
    """Round robin may send a 2026-07-28 client's tools/list to one replica and its calls to another, so
    a replica that never served a listing must still name the recover tool as the listing did."""
    from fixtures.pages_backend import page

    backend = [
        sys.executable,
        str(Path(__file__).parents[1] / "fixtures" / "pages_backend.py"),
        "--own-recover",
    ]
    with http_proxy_in_process(tmp_path, *backend, extra=("--budget", "2000")) as (url, _):
        async with Client(url, mode=MODERN) as client:
            big = await _raw_call(client, "page", {"key": "k", "size": 6000})  # the first request of all
            theirs = await _raw_call(client, "squeeze_recover", {})
            notice = big["_meta"]["truncation"]
            ours = await _raw_call(client, "squeeze_recover_2", {"response_id": notice["response_id"]})
            listed = sorted(t.name for t in (await client.list_tools()).tools)
    assert "squeeze_recover_2" in text(big)
    assert text(theirs) == "the backend's own squeeze_recover"
    assert text(ours) == page("k", 6000)
    assert listed == ["page", "squeeze_recover", "squeeze_recover_2"]
