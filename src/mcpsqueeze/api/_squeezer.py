"""`Squeezer`: a core `Session` for a host with a result in hand: present a CallToolResult, recover an
original by its response id. `Toolset` and `Client` are built on it. Originals stay in memory by default.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Unpack

from .._voice import McpVoice
from ..core import Outcome, RecoverKeywords, Session, parts_text, recover_tool_definition
from ..settings import (
    PolicySet,
    Settings,
    check_keywords,
    library_defaults,
)

__all__ = ["RECOVER_TOOL", "Squeezer", "as_result", "recover_tool_spec", "tool_spec"]

RECOVER_TOOL = "squeeze_recover"


def as_result(value: object) -> dict[str, Any]:
    """A handler's return value as a CallToolResult dict: a `str` is one text block, an MCP
    CallToolResult is itself, any other value its JSON text (a pydantic model: its JSON dump).
    TypeError when it is none of these."""
    if isinstance(value, str):
        return _text(value)
    if hasattr(value, "model_dump"):  # pydantic: only then is the SDK's result type worth importing
        import mcp_types

        if isinstance(value, mcp_types.CallToolResult):
            result: dict[str, Any] = value.model_dump(by_alias=True, exclude_none=True, mode="json")
            return result
        value = value.model_dump(mode="json")
    try:
        return _text(json.dumps(value, ensure_ascii=False))
    except (TypeError, ValueError) as exc:
        raise TypeError(
            f"a tool returned {type(value).__name__}, which is neither str, JSON nor a CallToolResult: {exc}"
        ) from exc


def tool_spec(tool: Mapping[str, Any]) -> dict[str, Any]:
    """A tool as the library shows it, `{"name", "description", "input_schema"}`, from its MCP definition."""
    return {
        "name": tool["name"],
        "description": tool.get("description") or "",
        "input_schema": tool.get("inputSchema") or {"type": "object"},
    }


def recover_tool_spec(name: str) -> dict[str, Any]:
    """The recover tool named `name` as the library shows it (golden-tested)."""
    return tool_spec(recover_tool_definition(name))


def _text(text: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": text}], "isError": False}


class Squeezer(Session):
    """Present tool results within a budget and recover their originals, in process.

    Every keyword is a knob of the table of settings (docs/config.md), checked there: `budget`, `shrink`,
    `dedup`, `truncate_chars` (False or 0: no cap), `shrink_above` (False: only results over the budget
    shrink), `toonify`, `query`, `drop_duplicate_structured`, `recovery` ("memory" by default; "files" or
    "both" write originals to `recovery_dir`), `cache_entries`, `cache_bytes`, `cache_ttl`, `jobs`, `client`
    (a profile's name, docs/clients.md). Left out (or None): the library's default. `policies` (a config
    file's) refine them per `server:tool`. Unknown, expired and evicted ids raise `RecoveryError`; recovery
    never re-runs a tool."""

    def __init__(
        self,
        budget: int | None = None,
        *,
        recover_tool: str = RECOVER_TOOL,
        policies: PolicySet | None = None,
        **options: Any,
    ) -> None:
        given = check_keywords("squeezer", {"budget": budget, **options})
        settings = Settings.make(**{**library_defaults("squeezer"), **given})
        settings.policies = policies or PolicySet()
        super().__init__(settings, voice=McpVoice(recover_tool))
        self.recover_tool = recover_tool

    @classmethod
    def from_settings(cls, settings: Settings) -> Squeezer:
        """A squeezer of settings already resolved (the `Client`'s: keywords over its config file)."""
        squeezer = cls.__new__(cls)
        Session.__init__(squeezer, settings, voice=McpVoice(RECOVER_TOOL))
        squeezer.recover_tool = RECOVER_TOOL
        return squeezer

    async def present(
        self, server: str, tool: str, arguments: dict[str, Any] | None, result: object, *, full: bool = False
    ) -> dict[str, Any]:
        """The result to show for one call (a dict or an MCP CallToolResult): deduplicated, shrunk, or
        unchanged; a changed result carries `_meta.truncation` with its `response_id`."""
        presented, _ = await self.present_outcome(server, tool, arguments, result, full=full)
        return presented

    async def present_outcome(  # type: ignore[override]
        self, server: str, tool: str, arguments: dict[str, Any] | None, result: object, *, full: bool = False
    ) -> tuple[dict[str, Any], Outcome]:
        """`present`, and what the stages did (`action`, `response_id`, `original_file`)."""
        raw = result if isinstance(result, dict) else as_result(result)
        return await super().present_outcome(server, tool, arguments or {}, raw, full=full)

    async def full(
        self,
        server: str,
        tool: str,
        arguments: dict[str, Any] | None = None,
        *,
        annotations: Mapping[str, Any] | None = None,
    ) -> dict[str, Any] | None:
        """`full` for one call, before the host runs the tool: the original of the last same call when it was
        changed and is still held; else None when `annotations` say `readOnlyHint` or `idempotentHint` (run
        the tool, `present(..., full=True)` its result); else an `isError` result saying why it did not
        run."""
        answer = await self.full_outcome(server, tool, arguments or {}, annotations=annotations)
        return None if answer is None else answer[0]

    def recover_result(
        self, response_id: str | list[str], **keywords: Unpack[RecoverKeywords]
    ) -> dict[str, Any]:
        """What the recover tool returns: the original, a JSON node (`pointer`), a JMESPath projection
        (`query`), a text window (`offset`, `length`) or `lines` ("120-180"). RecoveryError when the id is
        unknown, expired or evicted; UsageError for malformed or out-of-bounds arguments."""
        return self.answer_recover({"response_id": response_id, **keywords})

    def recover(self, response_id: str | list[str], **keywords: Unpack[RecoverKeywords]) -> str:
        """The original's text (or the part `pointer` / `query` / `offset`+`length` / `lines` select):
        the text of `recover_result`."""
        return parts_text(self.recover_result(response_id, **keywords))

    def original(self, response_id: str) -> dict[str, Any]:
        """The complete original CallToolResult exactly as the tool returned it."""
        loaded: dict[str, Any] = json.loads(self.stored(response_id))
        return loaded
