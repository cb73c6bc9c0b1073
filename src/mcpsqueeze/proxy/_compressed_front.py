"""`--compress-tools` at the MCP doors: the backend's tools kept per connection (every page, listed again on
each tools/list and after `notifications/tools/list_changed`), and a frontend call turned into its answer,
an error, or the real `tools/call` the door then runs as if the agent had sent it (so the pipeline,
policies and stats see the real tool). `core/_compressed.py` says what the tools look like.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import anyio

from .._errors import BackendError
from ..core import (
    FULL_META_KEY,
    CompressedToolError,
    CompressedTools,
    Invoke,
    large_invoke,
    list_recover_tool,
)
from ..settings import Settings
from ..transports import Message, error_response, list_tools, params_of

__all__ = ["NOT_FOUND", "Ask", "CompressedFront", "compressed_front", "invoke_message"]

NOT_FOUND = -32603  # mcp-compressor's code for an unknown tool name
#: A request of the door's own to the backend: (method, params) -> its answer.
Ask = Callable[[str, dict[str, Any]], Awaitable[Message]]


def compressed_front(settings: Settings) -> CompressedFront | None:
    """The door's compressed listing, or None when `--compress-tools off`."""
    if settings.compress_tools == "off":
        return None
    return CompressedFront(settings.compressed_prefix, settings.compress_tools)


@dataclass
class CompressedFront:
    """The compressed listing of one backend connection (or, stateless, of the one shared backend)."""

    prefix: str
    level: str
    tools: CompressedTools | None = None  # None: not listed yet, or the backend said its tools changed
    _lock: anyio.Lock = field(default_factory=anyio.Lock)

    def owns(self, name: object) -> bool:
        """Whether a tools/call of `name` is one of the frontend tools (answered or rewritten here), as
        last listed (named clear of the backend's tools); before a listing, by their plain names."""
        tools = self.tools if self.tools is not None else CompressedTools.of(self.prefix, self.level, ())
        return tools.owns(name)

    async def fetch(self, ask: Ask) -> CompressedTools | Message:
        """The backend's tools (every page), freshly listed; the backend's error answer when it fails."""
        refused: list[Message] = []

        async def asking(method: str, params: dict[str, Any]) -> Message:
            answer = await ask(method, params)
            if "error" in answer:
                refused.append(answer)
            return answer

        async with self._lock:
            try:
                listed = await list_tools(asking)
            except BackendError as exc:  # the backend's own error answer, else ours
                return refused[-1] if refused else error_response(None, NOT_FOUND, f"mcpsqueeze: {exc}")
            self.tools = CompressedTools.of(self.prefix, self.level, listed)
            return self.tools

    def listing(self, tools: CompressedTools, recover_tool: str | None) -> tuple[str | None, Any]:
        """(the recover tool's name, the tools/list result): the frontend tools and our recover tool,
        named clear of the backend's own tools too (one named squeeze_recover stays reachable by invoke)."""
        frontend = tools.listing()
        if recover_tool is None:
            return None, {"tools": frontend}
        stubs = [{"name": t.get("name")} for t in tools.tools]
        name, listed = list_recover_tool({"tools": [*frontend, *stubs]}, recover_tool)
        return name, {"tools": [*frontend, listed["tools"][-1]]}

    async def resolve(self, ask: Ask, request: Message, also: tuple[str | None, ...]) -> Message | Invoke:
        """`answer` on the tools as last listed (in a worker thread when the invoke is large: its check is
        linear in its input); an unknown tool name lists them again first (the backend may have added it
        without telling), so only a name it really lacks is "tool not found"."""
        large = large_invoke(params_of(request).get("arguments"))

        async def answer(tools: CompressedTools) -> Message | Invoke:
            if large:
                return await anyio.to_thread.run_sync(self.answer, tools, request, also)
            return self.answer(tools, request, also)

        cached = self.tools is not None
        tools = self.tools if self.tools is not None else await self.fetch(ask)
        if not isinstance(tools, CompressedTools):
            return {**tools, "id": request.get("id")}
        answered = await answer(tools)
        if cached and isinstance(answered, dict) and (answered.get("error") or {}).get("code") == NOT_FOUND:
            tools = await self.fetch(ask)
            if isinstance(tools, CompressedTools):
                answered = await answer(tools)
        return answered

    @staticmethod
    def answer(tools: CompressedTools, request: Message, also: tuple[str | None, ...]) -> Message | Invoke:
        """A tools/call of a frontend tool: its JSON-RPC answer, or the real call (`Invoke`) to run;
        `also`: the door's own tools (our recover tool) that invoke may name too."""
        params = params_of(request)
        name, arguments = params.get("name"), params.get("arguments")
        arguments = {} if arguments is None else arguments
        if not tools.owns(name):  # a backend tool of a frontend tool's plain name: the real call itself
            return Invoke(str(name), arguments)
        try:
            if name == tools.invoke_tool:
                return tools.invoke(arguments, also)
            result = tools.schema_answer(arguments) if name == tools.schema_tool else tools.list_answer()
        except CompressedToolError as exc:
            return error_response(request.get("id"), exc.code, exc.message)
        return {"jsonrpc": "2.0", "id": request.get("id"), "result": result}


def invoke_message(request: Message, invoke: Invoke) -> Message:
    """The agent's `<server>_invoke_tool` request as the real tools/call: same id and `_meta` (progress
    token), the real name and arguments, and `mcpsqueeze/full` when `full` was asked."""
    params = dict(request["params"]) if isinstance(request.get("params"), dict) else {}
    params["name"] = invoke.tool
    params["arguments"] = invoke.arguments
    if invoke.full:
        meta = params.get("_meta")
        params["_meta"] = {**(meta if isinstance(meta, dict) else {}), FULL_META_KEY: True}
    return {**request, "params": params}
