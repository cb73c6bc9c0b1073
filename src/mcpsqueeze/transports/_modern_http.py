"""The wire of the 2026-07-28 HTTP path, both sides: one POST per request, answered with one JSON body,
or with SSE events when notifications come first (keepalive comments while nothing comes); closing the
response stream is how the client cancels. `read_request` reads and checks a client's POST, `stream_answer`
answers it; `ModernHttpBackend` POSTs to a backend that speaks 2026-07-28 (each request its own POST,
nothing shared between them).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream

from .._envelope import MODERN_VERSION, own_request
from .._jsonbytes import dumps, loads
from ..settings import Settings
from ._http_limits import sdk_security
from ._jsonrpc import BACKEND_GONE, INVALID_REQUEST, PARSE_ERROR, Message, error_response, unreadable_answer

__all__ = [
    "PING_INTERVAL",
    "ModernHttpBackend",
    "Notify",
    "is_stateless_request",
    "read_request",
    "respond_json",
    "stream_answer",
]

log = logging.getLogger(__name__)

SSE_HEADERS = [
    (b"content-type", b"text/event-stream"),
    (b"cache-control", b"no-cache, no-transform"),
    (b"connection", b"keep-alive"),
    (b"x-accel-buffering", b"no"),
]
PING_INTERVAL = 15.0  # seconds between SSE keepalive comments
_NOT_ONE_REQUEST = "Body must be a single JSON-RPC request object"

#: Where a backend sends the notifications that belong to the request being answered.
Notify = Callable[[Message], Awaitable[None]]


def _event(message: Message) -> bytes:
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
    """`message` as the body, under the HTTP status the SDK gives its error code (200 for a result)."""
    from mcp.shared.inbound import ERROR_CODE_HTTP_STATUS

    error = message.get("error")
    code = error.get("code") if isinstance(error, dict) else None
    await respond(
        send, ERROR_CODE_HTTP_STATUS.get(code, 200) if isinstance(code, int) else 200, dumps(message)
    )


def is_stateless_request(headers: Any) -> bool:
    """Route as the SDK does: a protocol-version header naming no handshake-era revision is 2026-07-28+."""
    from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

    version = headers.get("mcp-protocol-version")
    return version is not None and version not in HANDSHAKE_PROTOCOL_VERSIONS


async def read_request(scope: Any, receive: Any, send: Any) -> tuple[Message, dict[str, str]] | None:
    """One 2026-07-28 request off the wire, with its headers, checked as the SDK checks one (its transport
    checks, a POST of one JSON-RPC request, the envelope ladder: its keys, routing headers and version)
    before any backend work. None when it is answered here already: a refusal, or a notification
    (acknowledged and dropped, as the SDK's modern entry does: 2026-07-28 defines none from the client
    over HTTP; cancelling is closing the response stream)."""
    from mcp.server.transport_security import TransportSecurityMiddleware
    from mcp.shared.inbound import InboundLadderRejection, classify_inbound_request
    from starlette.requests import Request

    request = Request(scope, receive)
    is_post = request.method == "POST"
    rejected = await TransportSecurityMiddleware(sdk_security()).validate_request(request, is_post=is_post)
    if rejected is not None:
        await rejected(scope, receive, send)
        return None
    if not is_post:
        await respond(send, 405, b"", None)
        return None
    try:
        message = loads(await request.body())
    except (ValueError, RecursionError):
        await respond_json(send, error_response(None, PARSE_ERROR, "Parse error"))
        return None
    one = isinstance(message, dict) and message.get("jsonrpc") == "2.0"
    if one and "id" not in message:
        await respond(send, 202, b"", None)
        return None
    if not one or not isinstance(message.get("method"), str):
        await respond_json(send, error_response(None, INVALID_REQUEST, _NOT_ONE_REQUEST))
        return None
    verdict = classify_inbound_request(message, headers=dict(request.headers))
    if isinstance(verdict, InboundLadderRejection):
        await respond_json(send, error_response(message["id"], verdict.code, verdict.message, verdict.data))
        return None
    return message, dict(request.headers)


async def _watch_disconnect(receive: Any, scope: anyio.CancelScope) -> None:
    while (await receive()).get("type") != "http.disconnect":
        pass
    scope.cancel()


async def stream_answer(
    receive: Any, send: Any, answer: Callable[[Notify], Awaitable[Message | None]]
) -> None:
    """Answer one request: `answer(notify)` gives the final message, `notify` carries what comes before
    it. One JSON body when the final message comes first; else an SSE stream of the notifications and
    then the final message, with keepalives. A client that disconnects cancels `answer`."""
    events, events_out = anyio.create_memory_object_stream[Message](16)

    async def work() -> None:
        async with events:
            final = await answer(events.send)
            if final is not None:
                await events.send({"final": final})

    with anyio.CancelScope() as cancel:
        async with anyio.create_task_group() as tg, events_out:
            tg.start_soon(_watch_disconnect, receive, cancel)
            tg.start_soon(work)
            item: Message | None = None
            with anyio.move_on_after(PING_INTERVAL):
                item = await _next(events_out)
            if item is not None and "final" in item:
                await respond_json(send, item["final"])
            else:
                await send({"type": "http.response.start", "status": 200, "headers": SSE_HEADERS})
                while item is None or "final" not in item:
                    chunk = b": ping\r\n\r\n" if item is None else _event(item)
                    await send({"type": "http.response.body", "body": chunk, "more_body": True})
                    item = None
                    with anyio.move_on_after(PING_INTERVAL):
                        item = await _next(events_out)
                await send({"type": "http.response.body", "body": _event(item["final"]), "more_body": False})
            tg.cancel_scope.cancel()


async def _next(stream: MemoryObjectReceiveStream[Message]) -> Message:
    try:
        return await stream.receive()
    except anyio.EndOfStream:
        return {"final": error_response(None, BACKEND_GONE, "mcpsqueeze: the backend closed the connection")}


# Headers a 2026-07-28 intermediary routes on; forwarded to a modern backend as the client sent them.
_FORWARDED = ("mcp-protocol-version", "mcp-method", "mcp-name", "accept", "content-type", "last-event-id")


class ModernHttpBackend:
    """Forwards each stateless request as its own POST; nothing is shared between requests."""

    dead: str | None = None  # each request is its own POST: there is no connection to lose

    def __init__(self, settings: Settings) -> None:
        from ._oauth import backend_client

        self.url = settings.target[0]
        self.client = backend_client(self.url, settings.headers, settings.timeout, settings.oauth)

    async def aclose(self) -> None:
        await self.client.aclose()

    async def probe(self) -> bool:
        """True when the backend answers `server/discover` listing 2026-07-28."""
        try:
            result = (await self.ask("server/discover", {})).get("result")
        except Exception as exc:  # unreachable, TLS, ...: the shared connection reports it properly
            log.debug("server/discover probe failed: %s", exc)
            return False
        versions = result.get("supportedVersions") if isinstance(result, dict) else None
        return isinstance(versions, list) and MODERN_VERSION in versions

    async def ask(self, method: str, params: dict[str, Any]) -> Message:
        """One request of the proxy's own, in the 2026-07-28 envelope: its answer, or
        an error response naming why there is none. Unreachable, it raises (httpx's errors)."""
        return await self._post(*own_request(method, params), None)

    async def call(self, message: Message, notify: Notify, headers: Mapping[str, str]) -> Message:
        """One client request, POSTed with its routing headers; its answer with the client's id."""
        forwarded = {k: v for k, v in headers.items() if k in _FORWARDED or k.startswith("mcp-param-")}
        try:
            return await self._post(message, forwarded, notify)
        except Exception as exc:
            why = f"mcpsqueeze: the backend did not answer: {exc}"
            return error_response(message["id"], BACKEND_GONE, why)

    async def _post(self, body: Message, headers: Mapping[str, str], notify: Notify | None) -> Message:
        """The answer to `body` (its id), from a JSON body or the SSE stream; the stream's other messages
        go to `notify`. An answer that cannot be read is an error naming why."""
        import httpx2

        content = dumps(body)
        async with self.client.stream("POST", self.url, content=content, headers=dict(headers)) as response:
            ctype = response.headers.get("content-type", "")
            why = f"HTTP {response.status_code}, {ctype or 'no content type'}"
            try:
                if ctype.startswith("application/json"):
                    answer = loads(await response.aread())
                    if isinstance(answer, dict):
                        return answer
                elif ctype.startswith("text/event-stream"):
                    async for event in httpx2.EventSource(response, max_event_size=None):
                        if not event.data:
                            continue
                        message = loads(event.data.encode())
                        if not isinstance(message, dict):
                            continue
                        if "method" not in message and message.get("id") == body["id"]:
                            return message
                        if notify is not None:
                            await notify(message)
            except ValueError as exc:
                why = str(exc)
        return unreadable_answer(body["id"], body["method"], why)
