"""The stateless path's backend for a 2026-07-28 URL: each request is its own POST with the same routing
headers; its notifications go to the client as they come. Closing the client's stream closes the backend's.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from typing import TYPE_CHECKING, Any

from .._envelope import MODERN_VERSION, our_meta
from .._jsonbytes import dumps, loads
from ..settings import Settings
from ..transports import BACKEND_GONE, Message, error_response, unreadable_answer
from ._modern_http import Notify, log

__all__ = ["ModernHttpBackend"]


# Headers a 2026-07-28 intermediary routes on; forwarded to a modern backend as the client sent them.
_FORWARDED = ("mcp-protocol-version", "mcp-method", "mcp-name", "accept", "content-type", "last-event-id")


class ModernHttpBackend:
    """Forwards each stateless request as its own POST; nothing is shared between requests."""

    dead: str | None = None  # each request is its own POST: there is no connection to lose

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
            result = (await self.ask("server/discover", {})).get("result")
        except Exception as exc:  # unreachable, TLS, ...: the shared connection reports it properly
            log.debug("server/discover probe failed: %s", exc)
            return False
        versions = result.get("supportedVersions") if isinstance(result, dict) else None
        return isinstance(versions, list) and MODERN_VERSION in versions

    async def ask(self, method: str, params: dict[str, Any] | None = None) -> Message:
        """One request of the proxy's own, in the 2026-07-28 envelope (the backend port): its answer, or
        an error response naming why there is none. Unreachable, it raises (httpx's errors)."""
        params = {**(params or {}), "_meta": our_meta()}
        body = {"jsonrpc": "2.0", "id": f"mcpsqueeze-{method}", "method": method, "params": params}
        headers = {
            "mcp-protocol-version": MODERN_VERSION,
            "mcp-method": method,
            "accept": "application/json, text/event-stream",
            "content-type": "application/json",
        }
        return await self._post(body, headers, None)

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
                    async for data in _sse_data(response):
                        message = loads(data.encode())
                        if not isinstance(message, dict):
                            continue
                        if "method" not in message and message.get("id") == body["id"]:
                            return message
                        if notify is not None:
                            await notify(message)
            except ValueError as exc:
                why = str(exc)
        return unreadable_answer(body["id"], body["method"], why)


async def _sse_data(response: Any) -> AsyncIterator[str]:
    """The data of each SSE event (its data lines joined); comments and other fields skipped."""
    data: list[str] = []
    async for line in response.aiter_lines():
        if line == "":
            if data:
                yield "\n".join(data)
            data = []
        elif line.startswith("data:"):
            data.append(line[5:].removeprefix(" "))
    if data:
        yield "\n".join(data)


if TYPE_CHECKING:  # mypy checks that this backend satisfies the backend port
    from ..transports import Backend

    def _is_a_backend(backend: ModernHttpBackend) -> Backend:
        return backend
