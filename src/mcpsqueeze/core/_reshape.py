"""Result stages that reshape a result rather than cut it: a tool's JMESPath projection (`query`
policy), and structuredContent as the client's model reads it. Both store the original first and name
it in ``_meta.truncation``; an original that cannot be stored leaves the result unchanged."""

from __future__ import annotations

import json
import logging

from .._clients import ClientProfile, may_change_structured, record_first, structured_json
from .._errors import RecoveryError, ShrinkError, UsageError
from .._jsonbytes import loads
from .._projection import project_text
from .._results import duplicates_text, text_blocks, truncation_record
from ..shrink import RecoveryHint
from ._pipeline import Call, Outcome, Result
from ._stages import ShrinkJob, StoringStage, laid_out, presented_with, shrink_fitting

__all__ = ["ProjectStage", "StructuredStage"]

log = logging.getLogger(__name__)
_INLINE_LIMIT = 64 * 1024


class ProjectStage(StoringStage):
    """A tool's `query` policy: JSON text blocks replaced by their JMESPath projection, before shrinking."""

    async def __call__(self, call: Call, result: Result, outcome: Outcome) -> Result:
        query = call.policy.query
        if query is None or outcome.action != "passthrough":
            return result
        content, indexes = text_blocks(result)
        if not indexes:
            return result
        texts = [content[i]["text"] for i in indexes]
        try:
            projected = await self._workers.run_sized(
                sum(map(len, texts)),
                lambda: [project_text(text, query) for text in texts],
                inline_below=_INLINE_LIMIT,
            )
        except UsageError as exc:  # the query does not apply to this result: show it whole
            log.warning("mcpsqueeze: %s:%s result not projected: %s", call.server, call.tool, exc)
            return result
        kept = await self._keep_rewritten(result, outcome, texts, projected)
        if kept is None:
            return result
        response_id, file, shown_texts = kept
        shown = sum(map(len, shown_texts))
        original_chars = sum(map(len, texts))
        message = (
            f"[mcpsqueeze] projected by this tool's query policy {query!r}: {shown} of {original_chars} "
            f"characters shown. {call.voice.complete_original(response_id)}"
        )
        report = {
            "pruned": True,
            "projected": True,
            "query": query,
            "original_chars": original_chars,
            "shown_chars": shown,
        }
        record = truncation_record(message, response_id, file, report)
        # The shim's stdout carries only the data; a projection still over the budget is shrunk next,
        # and the shrink record carries this one (as `projection`) instead of a notice it would cut.
        fits = shown + len(message) <= call.policy.budget
        notice = message if call.voice.notices_inline and fits else None
        new_content = laid_out(content, indexes, shown_texts, notice, call.client)
        presented = presented_with(result, new_content, {"truncation": record})
        outcome.kept("shrink", response_id, file)  # counted with the shrunk results
        outcome.report = record["report"]
        return presented


class StructuredStage(StoringStage):
    """What the model of a client that shows structuredContent gets (runs last), and
    ``--drop-duplicate-structured`` for any other client. Such a client reads the JSON of
    structuredContent instead of the text: one that repeats the text is dropped (the model reads the
    text's preview); one that differs and is over the budget (or the client's limits) becomes its own
    preview, its record inside. The door lists those tools without outputSchema (``listed_for``). The
    original stays recoverable: the earlier stage's, or stored here."""

    async def __call__(self, call: Call, result: Result, outcome: Outcome) -> Result:
        if "structuredContent" not in result or result.get("isError") is True:
            return result
        client = call.client
        shown = client is not None and client.shows_structured
        if shown and not may_change_structured(call.policy):
            return result
        if not shown and not call.policy.drop_duplicate_structured:
            return result
        if outcome.response_id is not None:  # already changed: the stored original is what to compare
            try:
                stored = outcome.response_id
                duplicate = await self._workers.run(lambda: duplicates_text(loads(self._store.get(stored))))
            except RecoveryError:
                return result
        else:
            duplicate = duplicates_text(result)
        if duplicate:
            return await self._drop(call, result, outcome)
        if shown:
            assert client is not None
            return await self._preview(call, client, result, outcome)
        return result

    async def _drop(self, call: Call, result: Result, outcome: Outcome) -> Result:
        meta = dict(result.get("_meta") or {})
        if outcome.response_id is not None:
            record = dict(meta.get("truncation") or {})
        else:
            kept = await self._store_new(result, outcome)
            if kept is None:
                return result
            response_id, file = kept
            dropped = "[mcpsqueeze] structuredContent dropped: it repeated the text. "
            message = dropped + call.voice.complete_original(response_id)
            record = truncation_record(message, response_id, file, {"pruned": False})
            outcome.response_id = response_id
            outcome.original_file = file
        record["structured_content_dropped"] = True
        meta["truncation"] = record
        presented = {k: v for k, v in result.items() if k != "structuredContent"}
        presented["_meta"] = meta
        return presented

    async def _preview(self, call: Call, client: ClientProfile, result: Result, outcome: Outcome) -> Result:
        """A structuredContent the client shows instead of the text, previewed when it is over the
        budget or the client's limits (half the budget when the client shows the text beside it)."""
        budget = call.policy.budget
        if client.shows == "both":
            budget //= 2
        fit = client.answer_limits()
        text = structured_json(result["structuredContent"])
        if not text or (len(text) <= budget and fit.fits(text)):
            return result
        if fit.budget is not None:
            budget = min(budget, fit.budget)
        response_id = outcome.response_id
        file = outcome.original_file
        if response_id is None:
            kept = await self._store_new(result, outcome)
            if kept is None:
                return result
            response_id, file = kept
        hint = RecoveryHint(response_id, file, call.voice)
        job = ShrinkJob([text], budget, hint, None, (), None, fit)
        try:
            shrunk = await self._workers.run(shrink_fitting, job)
        except ShrinkError:
            shrunk = None
        if shrunk is None:
            return result  # (stored, but nothing shown of it: an original without a preview is harmless)
        try:  # (the record first, where the client's model starts reading)
            value = json.loads(record_first(shrunk.texts[0], shrunk.truncation))
        except (ValueError, RecursionError):
            return result
        if shrunk.notice is not None and isinstance(value, dict):
            value = {**value, "mcpsqueeze": shrunk.notice}  # (the object owns "truncation" already)
        meta = dict(result.get("_meta") or {})
        record = dict(meta.get("truncation") or shrunk.truncation)
        record["structured_content_previewed"] = shrunk.truncation["report"]
        meta["truncation"] = record
        if outcome.action == "passthrough":
            outcome.kept("shrink", response_id, file)
            outcome.report = shrunk.report.as_dict()
        return {**result, "structuredContent": value, "_meta": meta}
