"""The stateless path's backend that speaks 2026-07-28 over HTTP (`wrap -- URL` whose server answers
`server/discover`): each request is forwarded as its own POST with the same body and routing headers,
and the answer streamed back; nothing is shared between requests.

What the proxy does not change passes through as sent: `InputRequiredResult` and its retry (MRTR),
`subscriptions/listen` streams, `ttlMs`/`cacheScope`; closing the client's stream closes the backend's
(cancellation). tools/call and tools/list answers go through the frontend's `finish`.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

import anyio

from .._jsonbytes import dumps, loads
from ..settings import Settings
from ..transports import BACKEND_GONE, Message, error_response, list_tool_names, unreadable_answer
from ._modern_http import (
    CLIENT_CAPABILITIES_META,
    MODERN_VERSION,
    PROTOCOL_VERSION_META,
    SSE_HEADERS,
    Exchange,
    StatelessFront,
    log,
    respond,
    respond_json,
    watch_disconnect,
)

__all__ = ["ModernHttpBackend"]


# Headers a 2026-07-28 intermediary routes on; forwarded to a modern backend as the client sent them.
_FORWARDED = ("mcp-protocol-version", "mcp-method", "mcp-name", "accept", "content-type", "last-event-id")


class ModernHttpBackend:
    """Forwards each stateless request as its own POST; nothing is shared between requests."""

    def __init__(self, settings: Settings) -> None:
        import httpx2

        from ..transports import backend_auth

        self.url = settings.target[0]
        timeout = httpx2.Timeout(30.0, read=settings.timeout if settings.timeout else 300.0)
        self.client = httpx2.AsyncClient(
            headers=dict(settings.headers),
            timeout=timeout,
            follow_redirects=False,
            auth=backend_auth(self.url, settings.headers, settings.oauth),
        )

    async def aclose(self) -> None:
        await self.client.aclose()

    async def probe(self) -> bool:
        """True when the backend answers `server/discover` listing 2026-07-28."""
        try:
            result = await self._ask("server/discover", {})
        except Exception as exc:  # unreachable, TLS, ...: the shared connection reports it properly
            log.debug("server/discover probe failed: %s", exc)
            return False
        versions = result.get("supportedVersions") if isinstance(result, dict) else None
        return isinstance(versions, list) and MODERN_VERSION in versions

    async def tool_names(self) -> list[str]:
        return await list_tool_names(self._ask)

    @property
    def dead(self) -> str | None:
        """Never: each request is its own POST, so there is no connection to lose."""
        return None

    async def request(self, method: str, params: dict[str, Any] | None = None) -> Message:
        """One request of the proxy's own, in the 2026-07-28 envelope (the backend port): its answer, or
        an error response naming why there is none. Unreachable, it raises (httpx's errors)."""
        meta = {PROTOCOL_VERSION_META: MODERN_VERSION, CLIENT_CAPABILITIES_META: {}}
        request_id = f"mcpsqueeze-{method}"
        body = {
            "jsonrpc": "2.0",
            "id": request_id,
            "method": method,
            "params": {**(params or {}), "_meta": meta},
        }
        headers = {
            "mcp-protocol-version": MODERN_VERSION,
            "mcp-method": method,
            "accept": "application/json, text/event-stream",
            "content-type": "application/json",
        }
        response = await self.client.post(self.url, content=dumps(body), headers=headers)
        answer = None
        why = f"HTTP {response.status_code}, {response.headers.get('content-type') or 'no content type'}"
        try:
            if response.headers.get("content-type", "").startswith("application/json"):
                answer = loads(response.content)
            elif response.headers.get("content-type", "").startswith("text/event-stream"):
                for line in response.text.splitlines():
                    if line.startswith("data:"):
                        answer = loads(line[5:].strip().encode())
        except (ValueError, RecursionError) as exc:
            why = str(exc)
        if isinstance(answer, dict) and ("result" in answer or "error" in answer):
            return answer
        return unreadable_answer(request_id, method, why)

    async def _ask(self, method: str, params: dict[str, Any]) -> Any:
        """The result of `request` (None when there is none)."""
        return (await self.request(method, params)).get("result")

    async def relay(self, front: StatelessFront, exchange: Exchange) -> None:
        headers = {
            k: v for k, v in exchange.request.headers.items() if k in _FORWARDED or k.startswith("mcp-param-")
        }
        message = exchange.message
        send = _TrackingSend(exchange.send)
        with anyio.CancelScope() as cancel:
            async with anyio.create_task_group() as tg:
                tg.start_soon(watch_disconnect, exchange.receive, cancel)
                try:
                    await self._forward(
                        front, exchange.method, exchange.params, message["id"], exchange.body, headers, send
                    )
                except Exception as exc:
                    if not _started(send):
                        await respond_json(
                            send,
                            error_response(
                                message["id"], BACKEND_GONE, f"mcpsqueeze: the backend did not answer: {exc}"
                            ),
                        )
                tg.cancel_scope.cancel()

    async def _forward(
        self,
        front: StatelessFront,
        method: str,
        params: dict[str, Any],
        request_id: Any,
        body: bytes,
        headers: dict[str, str],
        send: Any,
    ) -> None:
        tracked = send
        async with self.client.stream("POST", self.url, content=body, headers=headers) as response:
            ctype = response.headers.get("content-type", "")
            if ctype.startswith("application/json"):
                raw = await response.aread()
                try:
                    answer = loads(raw)
                except ValueError:
                    answer = None
                if isinstance(answer, dict) and answer.get("id") == request_id:
                    answer = await front.finish(method, params, answer)
                    raw = dumps(answer)
                await respond(tracked, response.status_code, raw)
                return
            if not ctype.startswith("text/event-stream"):
                await respond(tracked, response.status_code, await response.aread(), ctype or None)
                return
            await tracked(
                {"type": "http.response.start", "status": response.status_code, "headers": SSE_HEADERS}
            )
            async for event in _sse_events(response):
                data = event.get("data")
                if data is not None:
                    with contextlib.suppress(ValueError):
                        parsed = loads(data.encode())
                        if (
                            isinstance(parsed, dict)
                            and "method" not in parsed
                            and parsed.get("id") == request_id
                        ):
                            parsed = await front.finish(method, params, parsed)
                            event = {**event, "data": dumps(parsed).decode()}
                await tracked({"type": "http.response.body", "body": _render_event(event), "more_body": True})
            await tracked({"type": "http.response.body", "body": b"", "more_body": False})


class _TrackingSend:
    """An ASGI send that remembers whether the response has started (so an error can still be a reply)."""

    def __init__(self, send: Any) -> None:
        self.send = send
        self.started = False

    async def __call__(self, message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            self.started = True
        await self.send(message)


def _started(send: Any) -> bool:
    return bool(getattr(send, "started", False))


async def _sse_events(response: Any) -> AsyncIterator[dict[str, str]]:
    """SSE events as {field: value} (data lines joined); comments (keepalives) as {"comment": ...}."""
    event: dict[str, str] = {}
    async for line in response.aiter_lines():
        if line == "":
            if event:
                yield event
            event = {}
            continue
        if line.startswith(":"):
            yield {"comment": line[1:]}
            continue
        name, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if name == "data" and "data" in event:
            event["data"] += "\n" + value
        else:
            event[name] = value
    if event:
        yield event


def _render_event(event: dict[str, str]) -> bytes:
    if "comment" in event:
        return f":{event['comment']}\r\n\r\n".encode()
    lines = [f"{k}: {v}" for k, v in event.items() if k != "data"]
    if "data" in event:
        lines += [f"data: {part}" for part in event["data"].split("\n")]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


if TYPE_CHECKING:  # mypy checks that this backend satisfies the backend port
    from ..transports import Backend

    def _is_a_backend(backend: ModernHttpBackend) -> Backend:
        return backend
