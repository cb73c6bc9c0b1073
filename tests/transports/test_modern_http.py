"""Reading one 2026-07-28 POST off the wire: what is answered there (a refusal, an acknowledged
notification) never reaches the door, and a request that passes arrives with its headers."""

from __future__ import annotations

import json
from typing import Any

import anyio

from mcpsqueeze.transports import read_request

ENVELOPE = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}
HEADERS = {
    "content-type": "application/json",
    "accept": "application/json, text/event-stream",
    "mcp-protocol-version": "2026-07-28",
}


def _read(method: str, body: bytes, headers: dict[str, str]) -> tuple[Any, int | None, bytes]:
    """read_request's result, and the status and body it answered with (None: it answered nothing)."""
    scope = {
        "type": "http",
        "method": method,
        "path": "/mcp",
        "headers": [(k.encode(), v.encode()) for k, v in headers.items()],
    }
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": body, "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    result = anyio.run(read_request, scope, receive, send)
    status = next((m["status"] for m in sent if m["type"] == "http.response.start"), None)
    return result, status, b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")


def test_a_checked_request_reaches_the_door_with_its_headers() -> None:
    request = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": ENVELOPE}}
    result, status, _ = _read("POST", json.dumps(request).encode(), {**HEADERS, "mcp-method": "tools/list"})
    assert status is None
    assert result == (request, {**HEADERS, "mcp-method": "tools/list"})


def test_a_notification_is_acknowledged_and_dropped() -> None:
    note = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"_meta": ENVELOPE}}
    assert _read("POST", json.dumps(note).encode(), HEADERS)[:2] == (None, 202)


def test_what_is_not_one_post_of_one_request_is_refused_there() -> None:
    assert _read("GET", b"", HEADERS)[:2] == (None, 405)
    result, status, body = _read("POST", b"{not json", HEADERS)
    assert (result, status, json.loads(body)["error"]["message"]) == (None, 400, "Parse error")
    result, _, body = _read("POST", b'[{"jsonrpc": "2.0", "id": 1, "method": "ping"}]', HEADERS)
    assert result is None and "single JSON-RPC request" in json.loads(body)["error"]["message"]


def test_a_request_without_the_envelope_is_refused_with_its_id() -> None:
    request = {"jsonrpc": "2.0", "id": 7, "method": "tools/list"}
    result, _, body = _read("POST", json.dumps(request).encode(), {**HEADERS, "mcp-method": "tools/list"})
    assert result is None and json.loads(body)["id"] == 7
