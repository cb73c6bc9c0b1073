"""Opt-in result stages that reshape a result rather than cut it: a per-tool JMESPath projection
(`query` policy), and dropping a structuredContent that repeats the text (`drop_duplicate_structured`).

Both store the complete original first and name it in ``_meta.truncation``, like every changed result;
when the original cannot be stored the result passes unchanged.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from .._errors import RecoveryError, UsageError
from .._jsonbytes import loads
from .._results import text_blocks
from ..recovery import RecoveryStore
from ._pipeline import Call, Outcome, Result, text_of
from ._stages import StoringStage, presented_with

__all__ = ["ProjectStage", "StructuredStage", "duplicates_text"]

log = logging.getLogger(__name__)
_INLINE_LIMIT = 64 * 1024


def _project_texts(texts: list[str], query: str) -> list[str | None]:
    from .._projection import project_text

    return [project_text(text, query) for text in texts]


class ProjectStage(StoringStage):
    """A tool's `query` policy: JSON text blocks replaced by their JMESPath projection, before shrinking."""

    async def __call__(self, call: Call, result: Result, outcome: Outcome) -> Result:
        query = call.policy.query if call.policy is not None else None
        if query is None or outcome.action != "passthrough":
            return result
        content, indexes = text_blocks(result)
        if not indexes:
            return result
        texts = [content[i]["text"] for i in indexes]
        try:
            projected = await self._workers.run_sized(
                sum(map(len, texts)), _project_texts, texts, query, inline_below=_INLINE_LIMIT
            )
        except UsageError as exc:  # the query does not apply to this result: show it whole
            log.warning("mcpsqueeze: %s:%s result not projected: %s", call.server, call.tool, exc)
            return result
        kept = await self._keep_rewritten(result, outcome, content, indexes, texts, projected)
        if kept is None:
            return result
        response_id, stored, new_content, shown = kept
        original_chars = sum(map(len, texts))
        message = (
            f"[mcpsqueeze] projected by this tool's query policy {query!r}: {shown} of {original_chars} "
            f"characters shown. {self.voice.complete_original(response_id)}"
        )
        record: dict[str, Any] = {"message": message, "response_id": response_id}
        if stored.file:
            record["original_response_file"] = stored.file
        record["report"] = {
            "pruned": True,
            "projected": True,
            "query": query,
            "original_chars": original_chars,
            "shown_chars": shown,
        }
        # The shim's stdout carries only the data; a projection still over the budget is shrunk next,
        # and the shrink record carries this one (as `projection`) instead of a notice it would cut.
        fits = call.policy is None or shown + len(message) <= call.policy.budget
        if self.voice.notices_inline and fits:
            new_content.append({"type": "text", "text": message})
        presented = presented_with(result, new_content, {"truncation": record})
        outcome.kept("shrink", response_id, stored.file)  # counted with the shrunk results
        outcome.report = record["report"]
        return presented


def duplicates_text(result: Result) -> bool:
    """Whether the result's structuredContent repeats its text: the same JSON value, or an object whose
    one member is the text itself (`{"content": text}` of server-filesystem, `{"result": text}` of
    MCPServer's `-> str` tools)."""
    if "structuredContent" not in result:
        return False
    structured = result["structuredContent"]
    text = text_of(result)
    if isinstance(structured, dict) and len(structured) == 1 and next(iter(structured.values())) == text:
        return True
    try:
        return bool(json.loads(text) == structured)
    except (ValueError, RecursionError):
        return False


def _original_duplicates(store: RecoveryStore, response_id: str) -> bool:
    return duplicates_text(loads(store.load(response_id)))


class StructuredStage(StoringStage):
    """``--drop-duplicate-structured``: drop a structuredContent that repeats the text (runs last).

    For clients that forward structuredContent to the model, where a server that sends every result
    twice costs twice the tokens and undoes shrinking. The relay then hides the tool's outputSchema so
    the client does not reject a result without it. The original, structuredContent included, stays
    recoverable: the earlier stage's stored original when the result was already changed, else stored
    here."""

    async def __call__(self, call: Call, result: Result, outcome: Outcome) -> Result:
        if (
            call.policy is None
            or not call.policy.drop_duplicate_structured
            or "structuredContent" not in result
        ):
            return result
        meta = dict(result.get("_meta") or {})
        if outcome.response_id is not None:  # already changed: the stored original is what to compare
            try:
                duplicate = await self._workers.run(_original_duplicates, self._store, outcome.response_id)
            except RecoveryError:
                return result
            if not duplicate:
                return result
            record = dict(meta.get("truncation") or {})
        else:
            if not duplicates_text(result):
                return result
            kept = await self._store_new(result, outcome)
            if kept is None:
                return result
            response_id, stored = kept
            record = {
                "message": "[mcpsqueeze] structuredContent dropped: it repeated the text. "
                + self.voice.complete_original(response_id),
                "response_id": response_id,
            }
            if stored.file:
                record["original_response_file"] = stored.file
            record["report"] = {"pruned": False}
            outcome.response_id = response_id
            outcome.original_file = stored.file
        record["structured_content_dropped"] = True
        meta["truncation"] = record
        presented = {k: v for k, v in result.items() if k != "structuredContent"}
        presented["_meta"] = meta
        return presented
