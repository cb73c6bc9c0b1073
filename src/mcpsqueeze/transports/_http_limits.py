"""What an HTTP door allows a client. The bounds are applied where every door is built
(`_server.uvicorn_server`):

- **Body**: at most `--max-body` bytes (16 MiB by default). A `Content-Length` over it is refused with 413
  before a byte is read; a chunked body is counted as it arrives and refused when it passes the bound: the
  door never holds more. It acts on a request only once its body has arrived whole, so a request that stalls
  or is abandoned mid-body starts nothing.
- **Head and idle time**: a connection must deliver a complete request head within `HEAD_TIMEOUT` (10 s) of
  connecting or of its previous response, else it is closed (slow clients cannot hold descriptors until the
  process runs out). A head itself is bounded by h11 (16 KiB).

- **Host, Origin, Content-Type** (`RequestGuard`, asked by wrap's HTTP frontend before a request can open a
  session): against DNS rebinding and cross-site requests.
"""

from __future__ import annotations

import functools
import json
import logging
import socket
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from starlette.types import Message, Receive, Scope, Send

from .._net import LOOPBACK, is_loopback

__all__ = [
    "DEFAULT_MAX_BODY",
    "HEAD_TIMEOUT",
    "BodyLimit",
    "RequestGuard",
    "replaying",
    "sdk_security",
    "timed_protocol",
]

logger = logging.getLogger(__name__)

DEFAULT_MAX_BODY = 16 * 1024 * 1024
HEAD_TIMEOUT = 10.0  # seconds to send a complete request head, from connecting or the previous response


def _json_rpc_error(message: str) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": message}}).encode()


class BodyLimit:
    """ASGI middleware: the app sees a request only once its whole body has arrived, and never one whose body
    passes `limit` bytes (413, without holding more). A client that stalls or hangs up halfway costs a
    connection and one log line; `body(message)` renders the refusal in the door's error format."""

    def __init__(self, app: Any, limit: int, body: Callable[[str], bytes] | None = None) -> None:
        self.app, self.limit, self.body = app, limit, body or _json_rpc_error

    async def _refuse(self, scope: Scope, receive: Receive, send: Send) -> None:
        from starlette.responses import Response

        payload = self.body(
            f"the request body is larger than this door accepts ({self.limit} bytes, --max-body); "
            "send less, or start the proxy with a larger --max-body"
        )
        await Response(payload, 413, {"connection": "close"}, "application/json")(scope, receive, send)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        for name, value in scope.get("headers") or ():
            if name == b"content-length" and (not value.strip().isdigit() or int(value) > self.limit):
                await self._refuse(scope, receive, send)
                return
        chunks: list[bytes] = []
        received = 0
        while True:
            message = await receive()
            if message["type"] != "http.request":  # the client hung up mid-body: nothing to answer
                logger.warning(
                    "a client hung up before its whole request arrived (%s %s, %d bytes of it); nothing done",
                    scope.get("method"),
                    scope.get("path"),
                    received,
                )
                return
            chunk = message.get("body") or b""
            received += len(chunk)
            if received > self.limit:
                await self._refuse(scope, receive, send)
                return
            chunks.append(chunk)
            if not message.get("more_body"):
                break
        await self.app(scope, replaying(b"".join(chunks), receive), send)


def replaying(body: bytes, receive: Receive) -> Receive:
    """`receive` with a body already read handed out again first, then what comes after it (the client's
    disconnect)."""
    replayed = False

    async def replay() -> Message:
        nonlocal replayed
        if replayed:
            return await receive()
        replayed = True
        return {"type": "http.request", "body": body, "more_body": False}

    return replay


def timed_protocol(base: type[Any], head_timeout: float = HEAD_TIMEOUT) -> type[Any]:
    """uvicorn's HTTP protocol class `base` (h11 or httptools), closing a connection that has not sent
    a complete request head within `head_timeout` seconds of connecting or of its last response."""

    class TimedProtocol(base):  # type: ignore[misc]
        _head_timer: Any = None

        def connection_made(self, transport: Any) -> None:
            super().connection_made(transport)
            self._arm()

        def _arm(self) -> None:
            self._disarm()
            self._head_timer = self.loop.call_later(head_timeout, self._head_expired)

        def _disarm(self) -> None:
            if self._head_timer is not None:
                self._head_timer.cancel()
                self._head_timer = None

        def _in_request(self) -> bool:
            cycle = getattr(self, "cycle", None)
            return cycle is not None and not cycle.response_complete

        def _head_expired(self) -> None:
            self._head_timer = None
            if not self._in_request() and not self.transport.is_closing():
                self.transport.close()

        def data_received(self, data: bytes) -> None:
            super().data_received(data)
            if self._in_request():  # a whole head arrived: the request's own time is the app's
                self._disarm()

        def on_response_complete(self) -> None:
            super().on_response_complete()
            if not self.transport.is_closing():
                self._arm()

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            super().connection_lost(exc)

    TimedProtocol.__name__ = TimedProtocol.__qualname__ = f"Timed{base.__name__}"
    return TimedProtocol


@dataclass(frozen=True)
class RequestGuard:
    """Host and Origin checks against DNS rebinding and cross-site requests: loopback names always; a specific
    bind address adds itself; a wildcard bind adds the address a request arrived on and this machine's
    name. A rebinding page's own domain is never among them."""

    names: frozenset[str]
    arrival: bool = False

    @classmethod
    def for_bind(cls, host: str) -> RequestGuard:
        name = host.strip("[]").lower()
        if is_loopback(name):
            return cls(LOOPBACK)
        if name in ("0.0.0.0", "::", ""):
            return cls(LOOPBACK | {socket.gethostname().lower()}, arrival=True)
        return cls(LOOPBACK | {name})

    def allows_host(self, host: str | None, arrived_on: str | None) -> bool:
        """Whether a Host header or an Origin names one of ours (its host name, lowercased: "[::1]:8080"
        is "::1")."""
        try:
            name = urllib.parse.urlsplit(host if "//" in host else f"//{host}").hostname if host else None
        except ValueError:
            return False
        if name is None:
            return False
        return name in self.names or (self.arrival and arrived_on is not None and name == arrived_on.lower())

    def refusal(self, scope: Any, method: str, headers: Any) -> tuple[int, str] | None:
        """(status, reason) for a request to refuse before it can create a session, else None."""
        if method == "POST":
            content_type = headers.get("content-type") or ""
            if not content_type.lower().startswith("application/json"):
                return 400, "Invalid Content-Type header"
        server = scope.get("server")
        arrived_on = str(server[0]) if server else None
        if not self.allows_host(headers.get("host"), arrived_on):
            return 421, "Invalid Host header"
        origin = headers.get("origin")
        if origin and not self.allows_host(origin, arrived_on):
            return 403, "Invalid Origin header"
        return None


@functools.cache
def sdk_security() -> Any:
    """The MCP SDK transport's own request checks, with Host and Origin left to `RequestGuard` (which knows
    the address a request arrived on, for wildcard binds)."""
    from mcp.server.transport_security import TransportSecuritySettings

    return TransportSecuritySettings(enable_dns_rebinding_protection=False)
