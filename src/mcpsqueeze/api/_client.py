"""`Client`: an MCP client of your servers whose every result goes through the proxy's pipeline: the servers
of an `mcpServers` config connected in process over the `ServerLink`s serve holds (results taken raw:
structuredContent never re-validated), presented by a `Squeezer`. `with Client(...)` gives sync methods (on
a background event loop); `async with` the same names as coroutines.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import AsyncIterator, Callable, Mapping
from pathlib import Path
from typing import Any, Literal, Unpack

import anyio

from .._errors import MCPSqueezeError, UsageError, first_leaf
from .._results import text_of
from ..core import CompressedToolError, CompressedTools, RecoverKeywords, large_invoke, parts_text
from ..serve import Backends
from ..settings import (
    Config,
    Settings,
    ToolFilter,
    check_keywords,
    find_config,
    library_defaults,
    load_config,
    parse_config,
    read_servers_file,
)
from ._codeapi import PrivateAPI
from ._functions import make_function, unique_names
from ._portal import Portal
from ._squeezer import RECOVER_TOOL, Squeezer, recover_tool_spec, tool_spec

__all__ = ["Client", "ToolError"]


class ToolError(MCPSqueezeError):
    """A tool reported an error (`isError`); `result` is the presented CallToolResult."""

    def __init__(self, message: str, result: dict[str, Any]) -> None:
        super().__init__(message)
        self.result = result


class Client:
    """Call the tools of your MCP servers with every result shrunk, deduplicated and recoverable.

    `servers`: an `mcpServers` dict (with or without the outer key) or the path of such a JSON file; by
    default the config file's `[mcpServers.NAME]` tables. `config`: the TOML config of `wrap` and `serve` (by
    default the one they find; `False`: none), whose `[defaults]` apply where a keyword is not given and whose
    `[policies]` refine them per tool. The other keywords are knobs of the table of settings, as for
    `Squeezer`, plus `timeout`. Without a file: budget 20000, originals in memory for the client's life (128
    entries / 64 MiB). `compress_tools` (`low`..`max`; a server entry's own key wins) lists
    `<server>_get_tool_schema` and `<server>_invoke_tool` for that server, and an invoke runs the real tool
    through the same pipeline."""

    def __init__(
        self,
        servers: Mapping[str, Any] | str | os.PathLike[str] | None = None,
        budget: int | None = None,
        *,
        config: str | os.PathLike[str] | Literal[False] | None = None,
        **options: Any,
    ) -> None:
        # the config file as the CLI finds it (`MCPSQUEEZE_CONFIG`, else the user config dir's file)
        path = None if config is False else find_config(None if config is None else Path(config))[0]
        file = Config() if path is None else load_config(path)
        if servers is None:
            if not file.servers:
                raise UsageError(
                    "no servers: give an mcpServers dict or JSON file, or [mcpServers.NAME] tables in the "
                    f"config file ({file.path or 'none found'})"
                )
            servers = file.servers
        if isinstance(servers, Mapping):  # (as JSON: checked as a servers file's would be)
            servers = dict(servers)
            document = servers if "mcpServers" in servers else {"mcpServers": servers}
            specs = parse_config(json.dumps(document), "the servers config")
        else:
            servers_file = Path(servers)
            specs = parse_config(read_servers_file(servers_file), str(servers_file))
        # the library's defaults, under the file's `[defaults]` and policies, under the keywords given
        given = check_keywords("client", {"budget": budget, **options})
        base = Settings.make(**{**library_defaults("client"), **given})
        settings = self.settings = file.apply(base, keep=frozenset(given))
        self.squeezer = Squeezer.from_settings(settings)
        tools = ToolFilter(settings.include_tools, settings.exclude_tools)
        self._links = Backends(settings, specs, tools, self.squeezer, holder="client")
        self._backends = self._links.backends
        self._levels = {spec.name: spec.compress_tools or settings.compress_tools for spec in specs}
        self._portal: Portal | None = None
        self._code_api: PrivateAPI | None = None

    # -- lifecycle -------------------------------------------------------------------------------------

    @contextlib.asynccontextmanager
    async def _session(self) -> AsyncIterator[None]:
        """Hold every backend connection for the client's life, in one task group (SDK contexts must
        exit in the task that entered them). A server that cannot start surfaces as its BackendError, not
        inside an exception group."""
        try:
            async with anyio.create_task_group() as tg:
                try:
                    async with anyio.create_task_group() as starting:
                        for backend in self._backends.values():
                            starting.start_soon(backend.ensure, tg)
                except BaseException:
                    self._links.stop()
                    tg.cancel_scope.cancel()
                    raise
                self._links.tg = tg  # (open while it has one)
                try:
                    yield
                finally:
                    self._links.tg = None
                    if self._code_api is not None:
                        self._code_api.close()
                        self._code_api = None
                    self._links.stop()
                    tg.cancel_scope.cancel()
        except BaseExceptionGroup as group:
            first = first_leaf(group)
            if isinstance(first, MCPSqueezeError):
                raise first from group
            raise

    def __enter__(self) -> Client:
        self._portal = Portal()
        try:
            self._portal.enter(self._session())
        except BaseException:
            self._portal.close()
            self._portal = None
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    async def __aenter__(self) -> Client:
        self._stack = contextlib.AsyncExitStack()
        await self._stack.enter_async_context(self._session())
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
        """`{server: [{"name", "description", "input_schema"}, ...]}` as the servers listed them (with
        `compress_tools`, that server's compressed frontend tools)."""
        listed: dict[str, list[dict[str, Any]]] = {}
        for name, backend in self._backends.items():
            compressed = self._compressed(name)
            tools = compressed.listing() if compressed is not None else backend.tools
            listed[name] = [tool_spec(t) for t in tools]
        return listed

    def _compressed(self, server: str) -> CompressedTools | None:
        """The server's compressed listing (`compress_tools`), from its tools as last listed."""
        level = self._levels.get(server, "off")
        backend = self._backends.get(server)
        if level == "off" or backend is None:
            return None
        return CompressedTools.of(server, level, backend.tools)

    def call(
        self, server: str, tool: str, arguments: dict[str, Any] | None = None, full: bool = False
    ) -> Any:
        """The presented CallToolResult as a plain dict (awaitable under `async with`). `full=True`: the
        original of the last same call when it was changed and is still held, without running the tool;
        else a read-only or idempotent tool runs (unshrunk) and any other is not run (an `isError` result
        says so)."""
        return self._run(self._call, server, tool, arguments or {}, full)

    def recover(self, response_id: str | list[str], **keywords: Unpack[RecoverKeywords]) -> Any:
        """The original's text, or the part a JSON `pointer`, a JMESPath `query`, an `offset`+`length` window
        or `lines` ("120-180") selects (awaitable under `async with`). RecoveryError when the id is
        unknown, expired or evicted; UsageError for malformed or out-of-bounds arguments."""
        return self._run(self._recover, {"response_id": response_id, **keywords})

    def to_functions(self) -> list[Callable[..., Any]]:
        """One plain callable per tool (`server_tool`, keyword arguments, returns the presented text,
        raises ToolError for a tool error) plus `squeeze_recover`; each has `__name__`, `__doc__` and
        `schema` (its input JSON schema). Sync under `with`, coroutine functions under `async with`."""
        self._require_open()
        pairs = [(server, t) for server, tools in self.tools.items() for t in tools]
        # The recover function keeps its name (the hints in every result name it); a tool clashing with
        # it is the one suffixed.
        prefixed = [t["name"] if self._compressed(server) else f"{server}_{t['name']}" for server, t in pairs]
        recover_name, *names = unique_names([RECOVER_TOOL, *prefixed])
        functions = [
            make_function(name, tool["description"], tool["input_schema"], self._caller(server, tool["name"]))
            for (server, tool), name in zip(pairs, names, strict=True)
        ]
        recover = recover_tool_spec(recover_name)
        functions.append(
            make_function(
                recover_name, recover["description"], recover["input_schema"], self._in_mode(self._recover)
            )
        )
        return functions

    def write_code_client(self, lang: Literal["python", "typescript"], directory: str | Path) -> list[Path]:
        """Write Code Mode files for this client's servers into `directory` (docs/code-mode.md): a module per
        server, a typed function per tool, plus `squeeze_recover`, calling through this client's pipeline
        over a private socket that lives as long as the client. The paths written (awaitable under `async
        with`)."""
        return self._run(self._write_code_client, lang, directory)  # type: ignore[no-any-return]

    # -- internals -------------------------------------------------------------------------------------

    async def _write_code_client(
        self, lang: Literal["python", "typescript"], directory: str | Path
    ) -> list[Path]:
        from ..codemode import Endpoint, write_code_client

        self._require_open()
        if self._code_api is None:
            assert self._links.tg is not None
            api = PrivateAPI(self._links)
            await api.start(self._links.tg)
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
        if self._links.tg is None:
            raise UsageError("open the client first: `with Client(...) as client:` or `async with`")

    async def _call(self, server: str, tool: str, arguments: dict[str, Any], full: bool) -> dict[str, Any]:
        """One call through the pipeline: the presented result."""
        self._require_open()
        compressed = self._compressed(server)
        if compressed is not None and compressed.owns(tool):
            return await self._frontend_call(compressed, server, tool, arguments, full)
        presented, _ = await self._links.invoke(server, tool, arguments, full)
        return presented

    async def _frontend_call(
        self, compressed: CompressedTools, server: str, tool: str, arguments: dict[str, Any], full: bool
    ) -> dict[str, Any]:
        """A call of a compressed frontend tool: the schema or list answer, or the real call it names."""
        try:
            if tool == compressed.schema_tool:
                return compressed.schema_answer(arguments)
            if tool != compressed.invoke_tool:
                return compressed.list_answer()
            if large_invoke(arguments):  # its check is linear in the input: off the client's loop
                invoke = await anyio.to_thread.run_sync(compressed.invoke, arguments, (RECOVER_TOOL,))
            else:
                invoke = compressed.invoke(arguments, (RECOVER_TOOL,))
        except CompressedToolError as exc:
            raise UsageError(exc.message) from None
        if invoke.tool == RECOVER_TOOL and not any(t["name"] == RECOVER_TOOL for t in compressed.tools):
            return await anyio.to_thread.run_sync(self.squeezer.answer_recover, invoke.arguments)
        return await self._call(server, invoke.tool, invoke.arguments, full or invoke.full)

    async def _recover(self, arguments: dict[str, Any]) -> str:
        return parts_text(await anyio.to_thread.run_sync(self.squeezer.answer_recover, arguments))

    def _caller(self, server: str, tool: str) -> Callable[[dict[str, Any]], Any]:
        async def run(arguments: dict[str, Any]) -> str:
            presented = await self._call(server, tool, arguments, False)
            text = text_of(presented)
            if not text and "structuredContent" in presented:  # no text: the structured content's JSON
                text = json.dumps(presented["structuredContent"], ensure_ascii=False)
            if presented.get("isError") is True:
                raise ToolError(f"{server}.{tool} failed: {text}", presented)
            return text

        return self._in_mode(run)

    def _in_mode(self, run: Callable[[dict[str, Any]], Any]) -> Callable[[dict[str, Any]], Any]:
        """`run` itself under `async with`; a sync call of it on the client's loop under `with`."""
        portal = self._portal
        if portal is None:
            return run
        return lambda arguments: portal.call(run, arguments)
