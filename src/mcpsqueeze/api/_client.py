"""`Client`: an MCP client of your servers whose every result goes through the proxy's pipeline.

The servers are an `mcpServers` config (stdio commands and streamable-HTTP URLs), connected in process
with the same `ServerLink` connections `serve` holds (transports/_server_link.py: wire dicts, results
taken raw so structuredContent is never re-validated) and presented by the same `Squeezer` pipeline as
`wrap`. `with Client(...)` gives sync methods (run on a background event loop); `async with` gives the
same names as coroutines.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import json
import os
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable, Mapping
from pathlib import Path
from typing import Any, Literal

import anyio
import anyio.abc

from .._errors import BackendError, MCPSqueezeError, RecoveryError, UsageError
from .._results import text_of
from ..core import Outcome
from ..settings import (
    DEFAULT_BUDGET,
    DEFAULT_SHRINK_ABOVE,
    Config,
    ServerSpec,
    Settings,
    ToolFilter,
    find_config,
    load_config,
    parse_config,
)
from ..transports import ServerLink
from ._codeapi import ClientSessionAPI
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


# The Client's own defaults, where they differ from the CLI's: a library keeps originals in memory.
_DEFAULTS: dict[str, Any] = {
    "budget": DEFAULT_BUDGET,
    "dedup": True,
    "shrink": True,
    "recovery": "memory",
    "cache_entries": 128,
    "cache_bytes": 64 * MiB,
    "cache_ttl": 300.0,
    "retention": None,
    "truncate_chars": None,
    "shrink_above": DEFAULT_SHRINK_ABOVE,
    "toonify": False,
    "timeout": None,
}


def _read_config(config: str | os.PathLike[str] | Literal[False] | None) -> Config:
    """The config file as the CLI finds it (`MCPSQUEEZE_CONFIG`, else the user config dir's file),
    or the one named; `False`: none."""
    if config is False:
        return Config()
    path, _ = find_config(None if config is None else Path(config))
    return Config() if path is None else load_config(path)


def _settings(config: Config, given: dict[str, Any]) -> Settings:
    """The Client's defaults, under the config file's `[defaults]` and policies, under the keywords given."""
    explicit = {k: v for k, v in given.items() if v is not None}
    base = Settings(target=[], **{**_DEFAULTS, **explicit})
    settings = config.apply(base, keep=frozenset(explicit))
    if settings.truncate_chars == 0:  # truncate_chars=0: no per-block cap, whatever the file says
        settings = dataclasses.replace(settings, truncate_chars=None)
    if settings.shrink_above is False:  # shrink_above=False: only results over the budget shrink
        settings = dataclasses.replace(settings, shrink_above=None)
    return settings


def _specs(servers: Mapping[str, Any] | str | os.PathLike[str]) -> list[ServerSpec]:
    if isinstance(servers, Mapping):
        servers = dict(servers)
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
    "headers"}}`, with or without the outer `"mcpServers"` key) or the path of such a JSON file; when
    omitted, the config file's `[mcpServers.NAME]` tables.

    `config` is the TOML config file of `wrap` and `serve` (docs/config.md): by default the same one
    they find (`MCPSQUEEZE_CONFIG`, else `<user config dir>/mcpsqueeze/config.toml` when it exists);
    `False` reads none. Its `[defaults]` apply where a keyword here is not given (None), and its
    `[policies."server:tool"]` refine them per tool. Without a file: budget 20000, originals in memory
    (128 entries / 64 MiB / 5 min). `truncate_chars=0` turns off a per-block cap the file sets;
    `shrink_above` (default 6000, `False`: off) sizes the previews of results over it by value.
    """

    def __init__(
        self,
        servers: Mapping[str, Any] | str | os.PathLike[str] | None = None,
        budget: int | None = None,
        *,
        config: str | os.PathLike[str] | Literal[False] | None = None,
        dedup: bool | None = None,
        shrink: bool | None = None,
        recovery: Literal["memory", "files", "both"] | None = None,
        recovery_dir: str | Path | None = None,
        cache_entries: int | None = None,
        cache_bytes: int | None = None,
        cache_ttl: float | None = None,
        timeout: float | None = None,
        truncate_chars: int | None = None,
        toonify: bool | None = None,
        shrink_above: int | Literal[False] | None = None,
        include_tools: tuple[str, ...] = (),
        exclude_tools: tuple[str, ...] = (),
    ) -> None:
        file = _read_config(config)
        if servers is None:
            if not file.servers:
                raise UsageError(
                    "no servers: give an mcpServers dict or JSON file, or [mcpServers.NAME] tables in the "
                    f"config file ({file.path or 'none found'})"
                )
            servers = file.servers
        specs = _specs(servers)
        given = {
            "budget": budget,
            "dedup": dedup,
            "shrink": shrink,
            "recovery": recovery,
            "recovery_dir": None if recovery_dir is None else Path(recovery_dir),
            "cache_entries": cache_entries,
            "cache_bytes": cache_bytes,
            "cache_ttl": cache_ttl,
            "timeout": timeout,
            "truncate_chars": truncate_chars,
            "toonify": toonify,
            "shrink_above": shrink_above,
        }
        settings = self.settings = _settings(file, given)
        self.squeezer = Squeezer(
            settings.budget,
            dedup=settings.dedup,
            shrink=settings.shrink,
            recovery=settings.recovery,
            recovery_dir=settings.recovery_dir,
            cache_entries=settings.cache_entries,
            cache_bytes=settings.cache_bytes,
            cache_ttl=settings.cache_ttl,
            recover_tool=RECOVER_TOOL,
            jobs=settings.jobs,
            truncate_chars=settings.truncate_chars,
            toonify=settings.toonify,
            policies=settings.policies,
            shrink_above=settings.shrink_above,
        )
        tools = ToolFilter(tuple(include_tools), tuple(exclude_tools))
        self._backends = {spec.name: ServerLink(spec, tools, settings.timeout) for spec in specs}
        self._portal: Portal | None = None
        self._open = False
        self._tg: anyio.abc.TaskGroup | None = None
        self._code_api: ClientSessionAPI | None = None
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
            self._open, self._tg = True, tg
            try:
                yield
            finally:
                self._open, self._tg = False, None
                if self._code_api is not None:
                    self._code_api.close()
                    self._code_api = None
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
        *,
        query: str | None = None,
        lines: str | None = None,
    ) -> Any:
        """The original's text, or the part a JSON `pointer`, a JMESPath `query`, an `offset`+`length`
        window or a range of `lines` ("120-180", as fold markers name them) selects (awaitable under
        `async with`). RecoveryError when the id is unknown, expired or evicted."""
        return self._run(self._recover, response_id, pointer, offset, length, query, lines)

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

    def write_code_client(self, lang: Literal["python", "typescript"], directory: str | Path) -> list[Path]:
        """Write Code Mode files for this client's servers into `directory` (docs/code-mode.md): one module
        per server, one typed function per tool, plus `squeeze_recover`. They call this client's tools
        through its pipeline over a private Unix socket (0700 directory, 0600 socket) that lives as long
        as the client. Returns the paths written (awaitable under `async with`)."""
        return self._run(self._write_code_client, lang, directory)  # type: ignore[no-any-return]

    # -- internals -------------------------------------------------------------------------------------

    async def _write_code_client(
        self, lang: Literal["python", "typescript"], directory: str | Path
    ) -> list[Path]:
        from ..codemode import Endpoint, write_code_client

        self._require_open()
        if self._code_api is None:
            assert self._tg is not None
            api = ClientSessionAPI(self._backends, self.squeezer, self._invoke)
            await api.start(self._tg)
            self._code_api = api
        assert self._code_api.socket_path is not None
        endpoint = Endpoint(socket_path=str(self._code_api.socket_path))
        listings = {name: backend.tools for name, backend in self._backends.items()}
        return await anyio.to_thread.run_sync(write_code_client, lang, directory, listings, endpoint)

    def _run(self, func: Callable[..., Any], *args: Any) -> Any:
        if self._portal is not None:
            return self._portal.call(func, *args)
        return func(*args)

    def _require_open(self) -> None:
        if not self._open:
            raise UsageError("open the client first: `with Client(...) as client:` or `async with`")

    async def _call(self, server: str, tool: str, arguments: dict[str, Any], full: bool) -> dict[str, Any]:
        presented, _ = await self._invoke(server, tool, arguments, full)
        return presented

    async def _invoke(
        self, server: str, tool: str, arguments: dict[str, Any], full: bool
    ) -> tuple[dict[str, Any], Outcome]:
        """One call through the pipeline, and what the stages did (for the session API's answer)."""
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
                original = await anyio.to_thread.run_sync(self.squeezer.original, self._last[key])
                return original, Outcome(action="full")
        if backend.status != "up":
            raise BackendError(f"server {server!r} is not connected: {backend.error}")
        result = await backend.call(tool, arguments)
        presented, outcome = await self.squeezer.present_outcome(server, tool, arguments, result, full=full)
        meta = presented.get("_meta")
        record = meta.get("truncation") if isinstance(meta, dict) else None
        if isinstance(record, dict) and isinstance(record.get("response_id"), str):
            self._last[key] = record["response_id"]
            self._last.move_to_end(key)
            while len(self._last) > _REMEMBERED:
                self._last.popitem(last=False)
        return presented, outcome

    async def _recover(
        self,
        response_id: str,
        pointer: str | None,
        offset: int | None,
        length: int | None,
        query: str | None = None,
        lines: str | None = None,
    ) -> str:
        recover = self.squeezer.recover
        return await anyio.to_thread.run_sync(
            functools.partial(recover, response_id, pointer, offset, length, query=query, lines=lines)
        )

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
