"""`shrink_tools`: a host's own tools, wrapped so every result is presented by the proxy's pipeline; a call
runs the tool once, and the added recover tool answers from the store.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import anyio

from .._errors import MCPSqueezeError, RecoveryError, UsageError
from .._unique import unique
from ._hints import Arguments, schema_of
from ._portal import Portal
from ._squeezer import RECOVER_TOOL, Squeezer, as_result, recover_tool_spec

__all__ = ["Toolset", "shrink_tools"]


@dataclass(frozen=True)
class HostTool:
    """One host-owned tool: what the model sees, and the handler that runs it."""

    name: str
    description: str
    input_schema: dict[str, Any]
    handler: Callable[..., Any]
    arguments: Arguments | None = None  # checks and converts arguments for a plain function

    def spec(self) -> dict[str, Any]:
        return {"name": self.name, "description": self.description, "input_schema": self.input_schema}


def _host_tool(tool: object) -> HostTool:
    if isinstance(tool, dict):
        missing = [k for k in ("name", "handler") if k not in tool]
        if missing:
            raise UsageError(
                f"a tool dict needs 'name', 'description', 'input_schema' and 'handler'; {missing} missing"
            )
        name, handler = tool["name"], tool["handler"]
        if not isinstance(name, str) or not name or not callable(handler):
            raise UsageError(f"tool {name!r}: 'name' must be a non-empty string and 'handler' callable")
        schema = tool.get("input_schema") or {"type": "object", "properties": {}}
        if not isinstance(schema, dict):
            raise UsageError(f"tool {name!r}: 'input_schema' must be a JSON schema object")
        return HostTool(name, str(tool.get("description") or ""), schema, handler)
    if callable(tool):
        name = getattr(tool, "__name__", "")
        if not isinstance(name, str) or not name.isidentifier():
            raise UsageError(f"{tool!r} has no usable __name__; pass a dict with an explicit 'name'")
        arguments = Arguments.of(tool)
        return HostTool(name, inspect.getdoc(tool) or "", schema_of(arguments), tool, arguments)
    raise UsageError(f"a tool must be a function or a dict with a handler, not {type(tool).__name__}")


def _error(text: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": text}], "isError": True}


class Toolset:
    """Host tools plus the recover tool, every result presented by the proxy's pipeline."""

    def __init__(self, tools: list[HostTool], squeezer: Squeezer, server: str = "host") -> None:
        self._tools = {t.name: t for t in tools}
        self.squeezer = squeezer
        self.server = server
        self.recover_tool = squeezer.recover_tool
        self._portal = Portal()

    @property
    def tools(self) -> list[dict[str, Any]]:
        """`{"name", "description", "input_schema"}` of every tool, the recover tool last."""
        return [t.spec() for t in self._tools.values()] + [recover_tool_spec(self.recover_tool)]

    async def call(self, name: str, arguments: dict[str, Any] | None = None) -> dict[str, Any]:
        """Run one tool and return its presented CallToolResult as a plain dict (the recover tool
        returns the original). A failing tool, an unknown name or a bad id give an `isError` result."""
        arguments = {} if arguments is None else arguments
        if name == self.recover_tool:
            try:
                return await anyio.to_thread.run_sync(self.squeezer.answer_recover, arguments)
            except (RecoveryError, UsageError) as exc:
                return _error(f"mcpsqueeze: {exc}")
        tool = self._tools.get(name)
        if tool is None:
            known = ", ".join([*self._tools, self.recover_tool])
            return _error(f"mcpsqueeze: there is no tool named {name!r}; the tools are: {known}")
        if not isinstance(arguments, dict):
            return _error(f"mcpsqueeze: the arguments of {name} must be an object")
        try:
            result = as_result(await self._run(tool, arguments))
        except MCPSqueezeError as exc:
            return _error(f"mcpsqueeze: {exc}")
        except Exception as exc:  # a host tool's failure is a tool error for the model, not a crash
            return _error(f"{type(exc).__name__}: {exc}")
        return await self.squeezer.present(self.server, name, arguments, result)

    def call_sync(self, name: str, arguments: dict[str, Any] | None = None) -> dict[str, Any]:
        """`call` for sync hosts, on the toolset's own background event loop."""
        return self._portal.call(self.call, name, arguments)

    def close(self) -> None:
        """Stop the background loop (if `call_sync` started one) and finish accounting."""
        self._portal.close()
        self.squeezer.close()

    def __enter__(self) -> Toolset:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    async def _run(self, tool: HostTool, arguments: dict[str, Any]) -> Any:
        kwargs = tool.arguments.check(arguments) if tool.arguments is not None else arguments
        if inspect.iscoroutinefunction(tool.handler):
            return await tool.handler(**kwargs)
        value = await anyio.to_thread.run_sync(lambda: tool.handler(**kwargs))
        if inspect.isawaitable(value):  # an object with an async __call__, or a wrapper returning a coroutine
            value = await value
        return value


def shrink_tools(
    tools: Iterable[Callable[..., Any] | dict[str, Any]],
    budget: int | None = None,
    *,
    server: str = "host",
    **options: Any,
) -> Toolset:
    """Wrap host-owned tools: each result is deduplicated and shrunk to `budget` characters, and a recover
    tool (`squeeze_recover`, suffixed on a collision) brings originals back. `tools`: plain functions (sync
    or async; name, docstring and type hints make the tool) and/or dicts `{"name", "description",
    "input_schema", "handler"}`; a handler returns a `str`, a JSON value or a CallToolResult. The other
    keywords are `Squeezer`'s."""
    host_tools = [_host_tool(t) for t in tools]
    names = [t.name for t in host_tools]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise UsageError(f"two tools share the name(s) {duplicates}; tool names must be unique")
    squeezer = Squeezer(budget, recover_tool=unique([RECOVER_TOOL], set(names))[0], **options)
    return Toolset(host_tools, squeezer, server)
