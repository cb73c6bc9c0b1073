"""Long-lived connections to a session's backends (serve and `Client`), reconnected on demand: a `Correlator`
over a spawned command's stdio or streamable HTTP; results are the wire dicts as sent.
"""

from __future__ import annotations

import logging
from typing import Any

import anyio
import anyio.abc

from .._errors import BackendError, BackendFailure, first_leaf
from ..settings import ServerSpec, ToolFilter
from . import _channels
from ._correlator import Correlator, error_text
from ._jsonrpc import TIMEOUT, Message
from ._paging import list_tools

__all__ = ["BackendTimeout", "ServerLink"]

logger = logging.getLogger(__name__)


CONNECT_TIMEOUT = 60.0
#: Levels of a listed tool (its input schema's nesting, mostly) kept: deeper parts are listed as `{}`
#: (any value; the backend still checks its arguments). A backend may nest a schema 1,000 levels; the
#: shell shim's JSON parser, flags and Code Mode's types then walk a bounded depth.
MAX_SCHEMA_DEPTH = 64


def _within_depth(value: Any, depth: int) -> Any:
    """`value` with every object or array nested more than `depth` levels below it emptied."""
    if isinstance(value, dict):
        return {k: _within_depth(v, depth - 1) for k, v in value.items()} if depth else {}
    if isinstance(value, list):
        return [_within_depth(v, depth - 1) for v in value] if depth else []
    return value


class BackendTimeout(BackendFailure):
    """The backend did not answer within --timeout."""


class ServerLink:
    """One backend server: connect, list tools, call tools; `status` tells the health check."""

    def __init__(self, spec: ServerSpec, tools: ToolFilter, timeout: float | None) -> None:
        self.spec = spec
        self.filter = tools
        self.timeout = timeout
        self.status = "down"
        self.error: str | None = "not started"
        self.tools: list[dict[str, Any]] = []
        self._listings = self._listed = 0  # listings asked for, and the latest one applied
        self._connection: Correlator | None = None
        self._stop: anyio.Event | None = None
        self._lock = anyio.Lock()

    @property
    def name(self) -> str:
        return self.spec.name

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
        """Own the connection for its whole life (the channel's contexts exit in the task that entered)."""
        stop = self._stop = anyio.Event()
        started = False
        spec = self.spec
        try:
            opened = _channels.open_channel(
                url=spec.url,
                argv=[spec.command or "", *spec.args],
                headers=spec.headers,
                timeout=self.timeout,
                oauth=spec.oauth,
                env=spec.env or None,
                cwd=spec.cwd,
            )
            async with opened as channel, anyio.create_task_group() as tg:

                async def on_notification(message: Message) -> None:
                    if message.get("method") == "notifications/tools/list_changed":
                        tg.start_soon(self._relist, connection)  # not inline: the reader delivers its answer

                connection = Correlator(channel, on_notification=on_notification, timeout=self.timeout)

                async def read() -> None:
                    await connection.run()
                    stop.set()  # the backend went away: the holder ends, the link is down

                tg.start_soon(read)
                await connection.initialize({})
                await self._relist(connection, starting=True)
                self._connection, self.status, self.error = connection, "up", None
                started = True
                task_status.started()
                await stop.wait()
                if connection.dead is not None:
                    self.status, self.error = "down", connection.dead
                    logger.warning(f"mcpsqueeze: backend {self.name!r} went down: {self.error}")
                tg.cancel_scope.cancel()
        except Exception as exc:
            self.status, self.error = "down", _describe(exc)
            if not started:
                raise
            logger.warning(f"mcpsqueeze: backend {self.name!r} went down: {self.error}")
        finally:
            self._connection = None
            if self.status == "up":
                self.status, self.error = "down", "stopped"

    async def _relist(self, connection: Correlator, starting: bool = False) -> None:
        """The backend's tools, listed (again, after notifications/tools/list_changed: a tool added later
        can be called, a removed one is no longer offered). A later listing is never replaced by an
        earlier one that answered last; a failed re-listing keeps the tools as they were."""
        self._listings += 1
        mine = self._listings
        try:
            listed = await list_tools(connection.ask)
        except Exception as exc:
            if starting:
                raise
            logger.warning(
                f"mcpsqueeze: backend {self.name!r} changed its tools but could not list them: {exc}"
            )
            return
        if mine > self._listed:
            self._listed = mine
            self.tools = [
                _within_depth(t, MAX_SCHEMA_DEPTH) for t in listed if self.filter.allows(self.name, t["name"])
            ]

    async def call(self, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """The raw CallToolResult dict, exactly as the backend sent it (structuredContent not validated)."""
        connection = self._connection
        if connection is None:
            raise BackendError(f"backend {self.name!r} is not connected: {self.error}")
        answer = await connection.ask("tools/call", {"name": tool, "arguments": arguments})
        error = answer.get("error")
        if isinstance(error, dict) and error.get("code") == TIMEOUT:
            raise BackendTimeout(
                f"backend {self.name!r} did not answer {tool} within {self.timeout:g} s; "
                "retry, narrow the request, or raise --timeout"
            )
        result = answer.get("result")
        if not isinstance(result, dict):
            if connection.dead is not None:
                self.status, self.error = "down", connection.dead
                self.stop()  # release the dead connection; the next call reconnects
            raise BackendFailure(f"backend {self.name!r} failed on {tool}: {error_text(answer)}")
        if result.get("resultType") == "complete":  # 2026-07-28 envelope marker, not part of the result
            result = {k: v for k, v in result.items() if k != "resultType"}
        return result

    async def ping(self, timeout: float = 5.0) -> bool:
        """Liveness for the health check: a connected backend must answer ping."""
        connection = self._connection
        if connection is None:
            return False
        try:
            with anyio.fail_after(timeout):
                answer = await connection.ask("ping", {})
            if "result" not in answer:
                raise BackendError(error_text(answer))
        except Exception as exc:
            self.status, self.error = "down", f"no answer to ping: {_describe(exc)}"
            self.stop()
            return False
        return True

    def stop(self) -> None:
        if self._stop is not None:
            self._stop.set()


def _describe(exc: BaseException) -> str:
    exc = first_leaf(exc)
    if isinstance(exc, FileNotFoundError):
        return f"command not found ({exc.filename or exc})"
    if isinstance(exc, TimeoutError):
        return "timed out while connecting"
    return str(exc) or type(exc).__name__
