"""`Squeezer`: the proxy's pipeline (dedup -> shrink -> recovery store) for a host with a result in hand.

The same `Pipeline`, stages and store that `wrap` and `serve` build (services.py), driven in process:
present a CallToolResult, recover an original by its response id. The other library doors (`Toolset`,
`Client`) are built on it. Originals stay in memory by default: a host's process owns them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

from .._errors import RecoveryError, UsageError
from .._results import text_of
from .._voice import McpVoice
from ..core import Call, Outcome, build_services, new_pipeline, recover_call
from ..settings import (
    DEFAULT_BUDGET,
    DEFAULT_SHRINK_ABOVE,
    MIN_BUDGET,
    MIN_TRUNCATE_CHARS,
    PolicySet,
    Settings,
)

__all__ = ["RECOVER_TOOL", "Squeezer", "as_result"]

RECOVER_TOOL = "squeeze_recover"
MiB = 1024 * 1024


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


def _text(text: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": text}], "isError": False}


class Squeezer:
    """Present tool results within a budget and recover their originals, in process.

    Originals are kept in memory only by default (`cache_entries` / `cache_bytes` / `cache_ttl`);
    `recovery="files"` or `"both"` also writes them to `recovery_dir` as the proxy does. Unknown,
    expired and evicted ids raise `RecoveryError`; recovery never re-runs a tool. `truncate_chars`
    also caps each text block (`--truncate-chars`); `toonify` shows JSON results that are not shrunk
    as TOON (`--toonify`); `shrink_above` sizes the previews of results over that many characters by
    value (`--shrink-above`; None: only results over the budget shrink); `policies` (a config
    file's, `load_config(path).policies`) refine all of these per `server:tool`.
    """

    def __init__(
        self,
        budget: int = DEFAULT_BUDGET,
        *,
        dedup: bool = True,
        shrink: bool = True,
        recovery: Literal["memory", "files", "both"] = "memory",
        recovery_dir: str | Path | None = None,
        cache_entries: int = 128,
        cache_bytes: int = 64 * MiB,
        cache_ttl: float = 300.0,
        recover_tool: str = RECOVER_TOOL,
        jobs: int = 4,
        truncate_chars: int | None = None,
        toonify: bool = False,
        policies: PolicySet | None = None,
        shrink_above: int | None = DEFAULT_SHRINK_ABOVE,
    ) -> None:
        if budget < MIN_BUDGET:
            raise UsageError(f"budget must be at least {MIN_BUDGET} characters (got {budget})")
        if truncate_chars is not None and truncate_chars < MIN_TRUNCATE_CHARS:
            raise UsageError(
                f"truncate_chars must be at least {MIN_TRUNCATE_CHARS} characters (got {truncate_chars})"
            )
        if shrink_above is not None and (isinstance(shrink_above, bool) or shrink_above < 0):
            raise UsageError(f"shrink_above must be a number of characters or None (got {shrink_above!r})")
        if recovery not in ("memory", "files", "both"):
            raise UsageError('recovery must be "memory", "files" or "both"')
        if cache_entries < 1 or cache_bytes < 1 or cache_ttl <= 0:
            raise UsageError("cache_entries, cache_bytes and cache_ttl must all be positive")
        settings = Settings(
            target=[],
            dedup=dedup,
            shrink=shrink,
            budget=budget,
            recovery=recovery,
            cache_ttl=cache_ttl,
            cache_entries=cache_entries,
            cache_bytes=cache_bytes,
            retention=None,
            jobs=jobs,
            truncate_chars=truncate_chars,
            shrink_above=shrink_above,
            toonify=toonify,
            policies=policies or PolicySet(),
        )
        if recovery_dir is not None:
            settings.recovery_dir = Path(recovery_dir)
        self.settings = settings
        self.recover_tool = recover_tool
        self._services = build_services(settings)
        self._pipeline = new_pipeline(settings, self._services, McpVoice(recover_tool))
        self._calls = 0

    async def present(
        self, server: str, tool: str, arguments: dict[str, Any] | None, result: object, *, full: bool = False
    ) -> dict[str, Any]:
        """The result to show for one call (a dict or an MCP CallToolResult): deduplicated, shrunk, or
        unchanged; a changed result carries `_meta.truncation` with its `response_id`."""
        presented, _ = await self.present_outcome(server, tool, arguments, result, full=full)
        return presented

    async def present_outcome(
        self, server: str, tool: str, arguments: dict[str, Any] | None, result: object, *, full: bool = False
    ) -> tuple[dict[str, Any], Outcome]:
        """`present`, and what the stages did (`action`, `response_id`, `original_file`)."""
        self._calls += 1
        call = Call(server=server, tool=tool, arguments=arguments or {}, number=self._calls, full=full)
        raw = result if isinstance(result, dict) else as_result(result)
        return await self._pipeline.present(call, raw)

    def recover_result(
        self,
        response_id: str,
        pointer: str | None = None,
        offset: int | None = None,
        length: int | None = None,
        *,
        query: str | None = None,
        lines: str | None = None,
    ) -> dict[str, Any]:
        """What the recover tool returns: the original, one JSON node (`pointer`), a JMESPath projection
        (`query`), a text window, or a range of `lines` such as "120-180" (as fold markers name them)."""
        arguments: dict[str, Any] = {"response_id": response_id}
        selectors = (("pointer", pointer), ("offset", offset), ("length", length), ("query", query))
        for key, value in (*selectors, ("lines", lines)):
            if value is not None:
                arguments[key] = value
        return self.answer_recover(arguments)

    def answer_recover(self, arguments: object) -> dict[str, Any]:
        """The recover tool's answer to a call with `arguments`, exactly as the MCP proxy gives it."""
        return recover_call(self._services.store, arguments)

    def recover(
        self,
        response_id: str,
        pointer: str | None = None,
        offset: int | None = None,
        length: int | None = None,
        *,
        query: str | None = None,
        lines: str | None = None,
    ) -> str:
        """The original's text (or the part `pointer` / `query` / `offset`+`length` / `lines` select).
        RecoveryError when the id is unknown, expired or evicted; UsageError for malformed arguments."""
        return text_of(self.recover_result(response_id, pointer, offset, length, query=query, lines=lines))

    def original(self, response_id: str) -> dict[str, Any]:
        """The complete original CallToolResult exactly as the tool returned it."""
        store = self._services.store
        if store is None:
            raise RecoveryError("this squeezer keeps no originals (shrink=False and dedup=False)")
        loaded: dict[str, Any] = json.loads(store.load(response_id))
        return loaded

    def close(self) -> None:
        """Finish background token counting; the memory store is dropped with the object."""
        self._services.accountant.close()
