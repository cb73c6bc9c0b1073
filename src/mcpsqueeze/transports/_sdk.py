"""Long-lived client connections to the session's backends, reconnected on demand."""

from __future__ import annotations

import contextlib
import functools
import logging
import os
import sys
import warnings
from collections.abc import AsyncIterator
from typing import Any

import anyio
import anyio.abc

from .._errors import BackendError, BackendFailure
from ..settings import ServerSpec, ToolFilter

__all__ = ["Backend", "BackendTimeout"]

logger = logging.getLogger(__name__)


CONNECT_TIMEOUT = 60.0


class BackendTimeout(BackendFailure):
    """The backend did not answer within --timeout."""


class Backend:
    """One backend server: connect, list tools, call tools; `status` tells the health check."""

    def __init__(self, spec: ServerSpec, tools: ToolFilter, timeout: float | None) -> None:
        self.spec = spec
        self.filter = tools
        self.timeout = timeout
        self.status = "down"
        self.error: str | None = "not started"
        self.tools: list[dict[str, Any]] = []
        self._client: Any = None
        self._stop: anyio.Event | None = None
        self._lock = anyio.Lock()

    @property
    def name(self) -> str:
        return self.spec.name

    def _transport(self) -> contextlib.AbstractAsyncContextManager[Any]:
        if self.spec.url is not None:
            return _http_transport(self.spec.url, self.spec.headers, self.timeout, self.spec.oauth)
        from mcp import StdioServerParameters
        from mcp.client.stdio import stdio_client

        params = StdioServerParameters(
            command=self.spec.command or "",
            args=list(self.spec.args),
            env={**os.environ, **self.spec.env},
            cwd=self.spec.cwd,
        )
        return stdio_client(params, errlog=sys.stderr)

    async def ensure(self, tg: anyio.abc.TaskGroup) -> None:
        """Connect if not connected (one attempt at a time); raise BackendError when it cannot."""
        async with self._lock:
            if self.status == "up":
                return
            try:
                with anyio.fail_after(CONNECT_TIMEOUT):  # scoped in this task: a hung start is cancelled
                    await tg.start(self._hold)
            except Exception as exc:
                self.status, self.error = "down", _describe(exc)
                raise BackendError(f"backend {self.name!r} is not available: {self.error}") from exc

    async def _hold(self, *, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Own the client connection for its whole life (SDK contexts must exit in the task that entered)."""
        from mcp import Client

        stop = self._stop = anyio.Event()
        started = False
        try:
            async with Client(self._transport(), mode="legacy", read_timeout_seconds=self.timeout) as client:
                listed = await _list_all_tools(client)
                self.tools = [t for t in listed if self.filter.allows(self.name, t["name"])]
                self._client, self.status, self.error = client, "up", None
                started = True
                task_status.started()
                await stop.wait()
        except Exception as exc:
            self.status, self.error = "down", _describe(exc)
            if not started:
                raise
            logger.warning(f"mcpsqueeze: backend {self.name!r} went down: {self.error}")
        finally:
            self._client = None
            if self.status == "up":
                self.status, self.error = "down", "stopped"

    async def call(self, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """The raw CallToolResult dict, exactly as the backend sent it (structuredContent not validated)."""
        import mcp_types as types

        client = self._client
        if client is None:
            raise BackendError(f"backend {self.name!r} is not connected: {self.error}")
        request = types.CallToolRequest(params=types.CallToolRequestParams(name=tool, arguments=arguments))
        try:
            with anyio.fail_after(self.timeout) if self.timeout else contextlib.nullcontext():
                result: dict[str, Any] = await client.session.send_request(request, _raw_result())
        except TimeoutError as exc:
            raise BackendTimeout(
                f"backend {self.name!r} did not answer {tool} within {self.timeout:g} s; "
                "retry, narrow the request, or raise --timeout"
            ) from exc
        except Exception as exc:
            if self._client is None or "closed" in str(exc).lower():
                self.status, self.error = "down", _describe(exc)
                self.stop()  # release the dead connection; the next call reconnects
            raise BackendFailure(f"backend {self.name!r} failed on {tool}: {_describe(exc)}") from exc
        if result.get("resultType") == "complete":  # 2026-07-28 envelope marker, not part of the result
            del result["resultType"]
        return result

    async def ping(self, timeout: float = 5.0) -> bool:
        """Liveness for the health check: a connected backend must answer ping."""
        client = self._client
        if client is None:
            return False
        try:
            with anyio.fail_after(timeout), warnings.catch_warnings():
                warnings.simplefilter("ignore")  # deprecated in 2026-07-28, still part of legacy sessions
                await client.send_ping()
        except Exception as exc:
            self.status, self.error = "down", f"no answer to ping: {_describe(exc)}"
            self.stop()
            return False
        return True

    def stop(self) -> None:
        if self._stop is not None:
            self._stop.set()


@functools.cache
def _raw_result() -> Any:
    """The wire dict as the result type: structuredContent is passed on, not validated (built once)."""
    from pydantic import TypeAdapter

    return TypeAdapter(dict[str, Any])


async def _list_all_tools(client: Any) -> list[dict[str, Any]]:
    tools: list[dict[str, Any]] = []
    cursor: str | None = None
    while True:
        page = await client.list_tools(cursor=cursor) if cursor else await client.list_tools()
        tools += [t.model_dump(by_alias=True, exclude_none=True, mode="json") for t in page.tools]
        cursor = page.next_cursor
        if not cursor:
            return tools


def _describe(exc: BaseException) -> str:
    if isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        return _describe(exc.exceptions[0])
    if isinstance(exc, FileNotFoundError):
        return f"command not found ({exc.filename or exc})"
    if isinstance(exc, TimeoutError):
        return "timed out while connecting"
    return str(exc) or type(exc).__name__


@contextlib.asynccontextmanager
async def _http_transport(
    url: str, headers: dict[str, str], timeout: float | None, oauth: Any = None
) -> AsyncIterator[Any]:
    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    from ._oauth import backend_auth

    http_timeout = httpx2.Timeout(30.0, read=timeout or 300.0)
    auth = backend_auth(url, headers, oauth)  # OAuth with stored tokens (`mcpsqueeze auth login NAME`)
    async with (
        httpx2.AsyncClient(headers=headers, timeout=http_timeout, auth=auth) as http,
        streamable_http_client(url, http_client=http) as streams,
    ):
        yield streams
