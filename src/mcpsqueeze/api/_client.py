"""`Client`: an MCP client of your servers whose every result goes through the proxy's pipeline.

The servers are an `mcpServers` config (stdio commands and streamable-HTTP URLs), connected in process
with the same `Backend` connections `serve` holds (serve/_backends.py: the official SDK client, results
taken raw so structuredContent is never re-validated) and presented by the same `Squeezer` pipeline as
`wrap`. `with Client(...)` gives sync methods (run on a background event loop); `async with` gives the
same names as coroutines.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any, Literal

import anyio

from .._errors import BackendError, MCPSqueezeError, RecoveryError, UsageError
from ..pipeline import text_of
from ..serve._backends import Backend
from ..serve._config import ServerSpec, ToolFilter, parse_config
from ..settings import DEFAULT_BUDGET
from ._functions import make_function, unique_names
from ._portal import Portal
from ._recover_tool import recover_tool_spec
from ._squeezer import RECOVER_TOOL, MiB, Squeezer

__all__ = ["Client", "ToolError"]

_REMEMBERED = 4096  # calls whose original `full=True` can return without running the tool again


class ToolError(MCPSqueezeError):
    """A tool reported an error (`isError`); `result` is the presented CallToolResult."""

    def __init__(self, message: str, result: dict[str, Any]) -> None:
        super().__init__(message)
        self.result = result


def _specs(servers: dict[str, Any] | str | os.PathLike[str]) -> list[ServerSpec]:
    if isinstance(servers, dict):
        document = servers if "mcpServers" in servers else {"mcpServers": servers}
        return parse_config(json.dumps(document), "the servers config")
    path = Path(servers)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"cannot read the servers config {path}: {exc.strerror or exc}") from exc
    return parse_config(text, str(path))


def _canonical(server: str, tool: str, arguments: dict[str, Any]) -> str:
    return json.dumps([server, tool, arguments], sort_keys=True, separators=(",", ":"), default=str)


class Client:
    """Call the tools of your MCP servers with every result shrunk, deduplicated and recoverable.

    `servers` is an `mcpServers` dict (`{"name": {"command", "args", "env", "cwd"} | {"url",
    "headers"}}`, with or without the outer `"mcpServers"` key) or the path of such a JSON file.
    """

    def __init__(
        self,
        servers: dict[str, Any] | str | os.PathLike[str],
        budget: int = DEFAULT_BUDGET,
        *,
        dedup: bool = True,
        shrink: bool = True,
        recovery: Literal["memory", "files", "both"] = "memory",
        recovery_dir: str | Path | None = None,
        cache_entries: int = 128,
        cache_bytes: int = 64 * MiB,
        cache_ttl: float = 300.0,
        timeout: float | None = None,
        include_tools: tuple[str, ...] = (),
        exclude_tools: tuple[str, ...] = (),
    ) -> None:
        specs = _specs(servers)
        self.squeezer = Squeezer(
            budget,
            dedup=dedup,
            shrink=shrink,
            recovery=recovery,
            recovery_dir=recovery_dir,
            cache_entries=cache_entries,
            cache_bytes=cache_bytes,
            cache_ttl=cache_ttl,
            recover_tool=RECOVER_TOOL,
        )
        tools = ToolFilter(tuple(include_tools), tuple(exclude_tools))
        self._backends = {spec.name: Backend(spec, tools, timeout) for spec in specs}
        self._portal: Portal | None = None
        self._open = False
        # (server, tool, arguments) -> the response id of its last stored original, for full=True
        self._last: OrderedDict[str, str] = OrderedDict()

    # -- lifecycle -------------------------------------------------------------------------------------

    @contextlib.asynccontextmanager
    async def _session(self) -> AsyncIterator[None]:
        """Hold every backend connection for the client's life, in one task group (SDK contexts must
        exit in the task that entered them)."""
        async with anyio.create_task_group() as tg:
            try:
                async with anyio.create_task_group() as starting:
                    for backend in self._backends.values():
                        starting.start_soon(backend.ensure, tg)
            except BaseException:
                self._stop_backends()
                tg.cancel_scope.cancel()
                raise
            self._open = True
            try:
                yield
            finally:
                self._open = False
                self._stop_backends()
                tg.cancel_scope.cancel()

    def _stop_backends(self) -> None:
        for backend in self._backends.values():
            backend.stop()

    def __enter__(self) -> Client:
        self._portal = Portal()
        try:
            self._portal.enter(_unwrap_errors(self._session()))
        except BaseException:
            self._portal.close()
            self._portal = None
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    async def __aenter__(self) -> Client:
        self._stack = contextlib.AsyncExitStack()
        await self._stack.enter_async_context(_unwrap_errors(self._session()))
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self._stack.aclose()
        self.squeezer.close()

    def close(self) -> None:
        """End a `with` client: disconnect the servers and stop its event loop."""
        if self._portal is not None:
            portal, self._portal = self._portal, None
            portal.close()
        self.squeezer.close()

    # -- the API ---------------------------------------------------------------------------------------

    @property
    def tools(self) -> dict[str, list[dict[str, Any]]]:
        """`{server: [{"name", "description", "input_schema"}, ...]}` as the servers listed them."""
        return {
            name: [
                {
                    "name": t["name"],
                    "description": t.get("description") or "",
                    "input_schema": t.get("inputSchema") or {"type": "object"},
                }
                for t in backend.tools
            ]
            for name, backend in self._backends.items()
        }

    def call(
        self, server: str, tool: str, arguments: dict[str, Any] | None = None, full: bool = False
    ) -> Any:
        """The presented CallToolResult as a plain dict (awaitable under `async with`).

        `full=True` returns the complete original: the one cached from the last call with these
        arguments when there is one, otherwise the tool runs once and its result is passed unshrunk."""
        return self._run(self._call, server, tool, arguments or {}, full)

    def recover(
        self,
        response_id: str,
        pointer: str | None = None,
        offset: int | None = None,
        length: int | None = None,
    ) -> Any:
        """The original's text, or the part a JSON `pointer` / `offset`+`length` window selects
        (awaitable under `async with`). RecoveryError when the id is unknown, expired or evicted."""
        return self._run(self._recover, response_id, pointer, offset, length)

    def to_functions(self) -> list[Callable[..., Any]]:
        """One plain callable per tool (`server_tool`, keyword arguments, returns the presented text,
        raises ToolError for a tool error) plus `squeeze_recover`; each has `__name__`, `__doc__` and
        `schema` (its input JSON schema). Sync under `with`, coroutine functions under `async with`."""
        self._require_open()
        pairs = [(server, t) for server, tools in self.tools.items() for t in tools]
        # The recover function keeps its name (the hints in every result name it); a tool clashing with
        # it is the one suffixed.
        recover_name, *names = unique_names([RECOVER_TOOL] + [f"{server}_{t['name']}" for server, t in pairs])
        functions = [
            make_function(name, tool["description"], tool["input_schema"], self._caller(server, tool["name"]))
            for (server, tool), name in zip(pairs, names, strict=True)
        ]
        recover = recover_tool_spec(recover_name)
        functions.append(
            make_function(
                recover_name, recover["description"], recover["input_schema"], self._recover_caller()
            )
        )
        return functions

    # -- internals -------------------------------------------------------------------------------------

    def _run(self, func: Callable[..., Any], *args: Any) -> Any:
        if self._portal is not None:
            return self._portal.call(func, *args)
        return func(*args)

    def _require_open(self) -> None:
        if not self._open:
            raise UsageError("open the client first: `with Client(...) as client:` or `async with`")

    async def _call(self, server: str, tool: str, arguments: dict[str, Any], full: bool) -> dict[str, Any]:
        self._require_open()
        backend = self._backends.get(server)
        if backend is None:
            known = ", ".join(sorted(self._backends)) or "none"
            raise UsageError(f"no server named {server!r}; this client has: {known}")
        if not any(t["name"] == tool for t in backend.tools):
            names = ", ".join(t["name"] for t in backend.tools) or "none"
            raise UsageError(f"server {server!r} has no tool {tool!r}; its tools are: {names}")
        key = _canonical(server, tool, arguments)
        if full and key in self._last:
            with contextlib.suppress(RecoveryError):
                return await anyio.to_thread.run_sync(self.squeezer.original, self._last[key])
        if backend.status != "up":
            raise BackendError(f"server {server!r} is not connected: {backend.error}")
        result = await backend.call(tool, arguments)
        presented = await self.squeezer.present(server, tool, arguments, result, full=full)
        meta = presented.get("_meta")
        record = meta.get("truncation") if isinstance(meta, dict) else None
        if isinstance(record, dict) and isinstance(record.get("response_id"), str):
            self._last[key] = record["response_id"]
            self._last.move_to_end(key)
            while len(self._last) > _REMEMBERED:
                self._last.popitem(last=False)
        return presented

    async def _recover(
        self, response_id: str, pointer: str | None, offset: int | None, length: int | None
    ) -> str:
        return await anyio.to_thread.run_sync(self.squeezer.recover, response_id, pointer, offset, length)

    def _caller(self, server: str, tool: str) -> Callable[[dict[str, Any]], Any]:
        async def run(arguments: dict[str, Any]) -> str:
            presented = await self._call(server, tool, arguments, False)
            text = _presented_text(presented)
            if presented.get("isError") is True:
                raise ToolError(f"{server}.{tool} failed: {text}", presented)
            return text

        return self._in_mode(run)

    def _recover_caller(self) -> Callable[[dict[str, Any]], Any]:
        async def run(arguments: dict[str, Any]) -> str:
            return text_of(await anyio.to_thread.run_sync(self.squeezer.answer_recover, arguments))

        return self._in_mode(run)

    def _in_mode(self, run: Callable[[dict[str, Any]], Any]) -> Callable[[dict[str, Any]], Any]:
        """`run` itself under `async with`; a sync call of it on the client's loop under `with`."""
        portal = self._portal
        if portal is None:
            return run
        return lambda arguments: portal.call(run, arguments)


def _presented_text(result: dict[str, Any]) -> str:
    """What a function returns: the text blocks, or the structured content's JSON when there are none."""
    text = text_of(result)
    if not text and "structuredContent" in result:
        return json.dumps(result["structuredContent"], ensure_ascii=False)
    return text


@contextlib.asynccontextmanager
async def _unwrap_errors(cm: contextlib.AbstractAsyncContextManager[None]) -> AsyncIterator[None]:
    """A server that cannot start surfaces as its BackendError, not inside an exception group."""
    try:
        async with cm:
            yield
    except BaseExceptionGroup as group:
        first = _first_leaf(group)
        if isinstance(first, MCPSqueezeError):
            raise first from group
        raise


def _first_leaf(exc: BaseException) -> BaseException:
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc
