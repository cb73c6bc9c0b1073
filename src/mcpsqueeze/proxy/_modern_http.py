"""The wire of the 2026-07-28 HTTP path: its protocol's names, and the ASGI replies both of its backends
and the stateless frontend send (one JSON body, SSE events, keepalives, cancellation by disconnect).

`StatelessFront` is what a stateless backend needs of the frontend that hands it a request: the session
services (timeout) and `finish`, the pipeline applied to an answer.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Protocol

import anyio

from .._jsonbytes import dumps
from ..core import SessionServices
from ..transports import Message

__all__ = [
    "CACHEABLE",
    "CLIENT_CAPABILITIES_META",
    "ENVELOPE_PREFIX",
    "HANDSHAKE_VERSION",
    "MODERN_VERSION",
    "PING_INTERVAL",
    "PROTOCOL_VERSION_META",
    "SERVER_INFO_META",
    "SSE_HEADERS",
    "Exchange",
    "Send",
    "StatelessFront",
    "log",
    "params_of",
    "respond",
    "respond_json",
    "sse_event",
    "status_of",
    "watch_disconnect",
]

log = logging.getLogger("mcpsqueeze.proxy._stateless")  # one logger for the whole stateless path

MODERN_VERSION = "2026-07-28"
HANDSHAKE_VERSION = "2025-11-25"  # what the proxy speaks to a backend that does not answer server/discover
ENVELOPE_PREFIX = "io.modelcontextprotocol/"
PROTOCOL_VERSION_META = "io.modelcontextprotocol/protocolVersion"
CLIENT_CAPABILITIES_META = "io.modelcontextprotocol/clientCapabilities"
SERVER_INFO_META = "io.modelcontextprotocol/serverInfo"
CACHEABLE = frozenset(
    {"server/discover", "tools/list", "prompts/list", "resources/list", "resources/templates/list"}
)
SSE_HEADERS = [
    (b"content-type", b"text/event-stream"),
    (b"cache-control", b"no-cache, no-transform"),
    (b"connection", b"keep-alive"),
    (b"x-accel-buffering", b"no"),
]
PING_INTERVAL = 15.0  # seconds between SSE keepalive comments on the shared-connection path

Send = Callable[[Message], Awaitable[None]]


class StatelessFront(Protocol):
    """The frontend as its backends see it."""

    services: SessionServices

    async def finish(self, method: str, params: dict[str, Any], response: Message) -> Message: ...


def params_of(message: Message) -> dict[str, Any]:
    """A JSON-RPC message's params: {} when it has none (or they are not an object)."""
    params = message.get("params")
    return params if isinstance(params, dict) else {}


@dataclass(frozen=True, slots=True)
class Exchange:
    """One stateless request as the frontend hands it to a backend: the HTTP request (its headers), the
    JSON-RPC message and its raw body, and the ASGI channel (``receive`` tells a disconnect, ``send``
    answers)."""

    request: Any
    message: Message
    body: bytes
    receive: Any
    send: Any

    @property
    def method(self) -> str:
        method: str = self.message["method"]
        return method

    @property
    def params(self) -> dict[str, Any]:
        return params_of(self.message)


def status_of(message: Message) -> int:
    from mcp.shared.inbound import ERROR_CODE_HTTP_STATUS

    error = message.get("error")
    if isinstance(error, dict) and isinstance(error.get("code"), int):
        return ERROR_CODE_HTTP_STATUS.get(error["code"], 200)
    return 200


def sse_event(message: Message) -> bytes:
    return b"event: message\r\ndata: " + dumps(message) + b"\r\n\r\n"


async def respond(send: Any, status: int, body: bytes, content_type: str | None = "application/json") -> None:
    # a plain body with its length, as Starlette's Response sends it (no chunked encoding)
    headers = [(b"content-length", str(len(body)).encode())]
    if content_type:
        headers.append((b"content-type", content_type.encode()))
    if status == 405:
        headers.append((b"allow", b"POST"))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body, "more_body": False})


async def respond_json(send: Any, message: Message) -> None:
    await respond(send, status_of(message), dumps(message))


async def watch_disconnect(receive: Any, scope: anyio.CancelScope) -> None:
    """Closing the response stream is how a 2026-07-28 client cancels: stop the backend's work then."""
    while True:
        message = await receive()
        if message.get("type") == "http.disconnect":
            scope.cancel()
            return
