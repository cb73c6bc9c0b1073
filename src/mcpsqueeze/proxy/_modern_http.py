"""The wire of the 2026-07-28 HTTP path: one POST per request, answered with one JSON body, or with SSE
events when notifications come first (keepalive comments while nothing comes); closing the response
stream is how the client cancels."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream

from .._jsonbytes import dumps
from ..transports import BACKEND_GONE, Message, error_response

__all__ = ["PING_INTERVAL", "SSE_HEADERS", "Notify", "log", "respond", "respond_json", "stream_answer"]

log = logging.getLogger("mcpsqueeze.proxy._stateless")  # one logger for the whole stateless path

SSE_HEADERS = [
    (b"content-type", b"text/event-stream"),
    (b"cache-control", b"no-cache, no-transform"),
    (b"connection", b"keep-alive"),
    (b"x-accel-buffering", b"no"),
]
PING_INTERVAL = 15.0  # seconds between SSE keepalive comments

#: Where a backend sends the notifications that belong to the request being answered.
Notify = Callable[[Message], Awaitable[None]]


def status_of(message: Message) -> int:
    from mcp.shared.inbound import ERROR_CODE_HTTP_STATUS

    error = message.get("error")
    if isinstance(error, dict) and isinstance(error.get("code"), int):
        return ERROR_CODE_HTTP_STATUS.get(error["code"], 200)
    return 200


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
    await respond(send, status_of(message), dumps(message))


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

    async def notify(note: Message) -> None:
        await events.send(note)

    async def work() -> None:
        async with events:
            final = await answer(notify)
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
