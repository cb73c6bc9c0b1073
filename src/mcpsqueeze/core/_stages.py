"""The result stages: dedup, shrink, then (opt-in) TOON: glue between the pure engines and the store.
Heavy work runs in a bounded worker pool, so one huge result never stalls the other calls."""

from __future__ import annotations

import concurrent.futures
import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any, TypeVar

import anyio

from .._clients import ClientLimits, ClientProfile, arrange, record_first
from .._errors import RecoveryError, ShrinkError
from .._jsonbytes import dumps, loads
from .._results import text_blocks, text_chars
from ..recovery import RecoveryStore, new_response_id
from ..shrink import RecoveryHint, Shrunk, query_terms, render_notice, shrink_texts
from ._dedup import content_digest, render_overlap, render_pointer
from ._full import call_key
from ._overlap import MAX_RATIO, MIN_CHARS, Delta, overlap_delta
from ._pipeline import Call, Outcome, Result, text_of
from ._toon import toon_record, toonify_text

__all__ = [
    "DedupStage",
    "ShrinkJob",
    "ShrinkStage",
    "StoringStage",
    "ToonStage",
    "Workers",
    "laid_out",
    "shrink_fitting",
]

T = TypeVar("T")
_INLINE_LIMIT = 256 * 1024  # below this, hashing inline is cheaper than a thread hop
# A shrink below these sizes runs on the event loop (a worker would hold the GIL just the same, and the
# hops cost more than the work); the larger bound when it is the only shrink in flight. Bigger ones go
# to a worker so that the event loop never stalls for long.
_INLINE_SHRINK = 32 * 1024
_INLINE_SHRINK_ALONE = 320 * 1024


class Workers:
    """A bounded pool for CPU- and disk-bound stage work."""

    def __init__(self, jobs: int = 4) -> None:
        self._limiter = anyio.CapacityLimiter(jobs)

    async def run(self, func: Callable[..., T], *args: Any) -> T:
        return await anyio.to_thread.run_sync(functools.partial(func, *args), limiter=self._limiter)

    async def run_sized(self, size: int, func: Callable[..., T], *args: Any, inline_below: int = 0) -> T:
        """`func(*args)` on the event loop when `size` is under `inline_below`, else in the pool."""
        if size < inline_below:
            return func(*args)
        return await self.run(func, *args)


def _store_original(store: RecoveryStore, response_id: str, result: Result) -> str | None:
    """Serialise and store in one worker job: a big original is never serialised on the event loop."""
    return store.put(response_id, dumps(result))


@dataclass
class _Seen:
    number: int
    tool: str
    chars: int
    tokens: concurrent.futures.Future[int] | None


@dataclass
class _Earlier:
    number: int
    tool: str
    arguments: str  # the call's key (`call_key`): a re-read of the same thing is preferred
    text: str
    result: Result  # the complete result (not copied: stages never mutate a result, they build new ones)
    whole: bool  # the agent saw it whole (else shrunk: a delta names how to read its complete text)


#: How many characters of earlier results a session keeps to compare new results with (overlap dedup).
OVERLAP_HISTORY_CHARS = 8 * 1024 * 1024


class _History:
    """The session's recent text results, oldest dropped first once their characters pass the bound."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._items: list[_Earlier] = []
        self._chars = 0

    @staticmethod
    def _weight(item: _Earlier) -> int:
        """Characters held: the text, twice when the result also carries it as structuredContent."""
        return len(item.text) * (2 if "structuredContent" in item.result else 1)

    def add(self, item: _Earlier) -> None:
        if self._weight(item) > self.limit:
            return
        self._items.append(item)
        self._chars += self._weight(item)
        while self._chars > self.limit:
            self._chars -= self._weight(self._items.pop(0))

    def candidates(self, server_tool: str, arguments: str) -> list[_Earlier]:
        """The latest earlier result of the same call, then the latest of the same tool (at most two)."""
        latest: _Earlier | None = None
        same_call: _Earlier | None = None
        for e in reversed(self._items):  # newest first; stops at the latest of the same call
            if e.tool == server_tool:
                latest = latest or e
                if e.arguments == arguments:
                    same_call = e
                    break
        out = [same_call] if same_call is not None else []
        if latest is not None and latest is not same_call:
            out.append(latest)
        return out


def _best_delta(
    candidates: list[_Earlier], text: str, number: int, tool: str, limit: int | None = None
) -> tuple[_Earlier, Delta] | None:
    best: tuple[_Earlier, Delta] | None = None
    for earlier in candidates:
        delta = overlap_delta(
            earlier.text, text, f"call #{earlier.number} ({tool})", f"call #{number} ({tool})", limit
        )
        if delta is not None and (best is None or len(delta.body) < len(best[1].body)):
            best = (earlier, delta)
    return best


def _counted(future: concurrent.futures.Future[int] | None) -> int | None:
    """The first sight's token count if the counter already has it. A repeat never waits for it: counting
    runs at idle time, off the response path, so the pointer then states the characters instead."""
    if future is None or not future.done() or future.cancelled() or future.exception() is not None:
        return None
    return future.result()


class StoringStage:
    """A stage that stores the original of what it changes and says, in the call's voice, how to get
    it back."""

    def __init__(self, store: RecoveryStore, workers: Workers) -> None:
        self._store = store
        self._workers = workers

    async def _store_new(
        self, result: Result, outcome: Outcome, response_id: str | None = None
    ) -> tuple[str, str | None] | None:
        """The response id (a new one unless given) and the file of the stored original of `result` (None:
        no file holds it); None, noted on `outcome`, when it could not be stored (the result then passes
        unchanged: never a change without its original). A small original with no network store is stored
        inline (cheaper than a hop)."""
        response_id = response_id or new_response_id()
        inline_below = 0 if self._store.remote else _INLINE_LIMIT
        try:
            file = await self._workers.run_sized(
                text_chars(result),
                _store_original,
                self._store,
                response_id,
                result,
                inline_below=inline_below,
            )
        except RecoveryError as exc:
            outcome.store_failed = str(exc)
            return None
        return response_id, file

    async def _keep_rewritten(
        self, result: Result, outcome: Outcome, texts: list[str], rewritten: Sequence[str | None]
    ) -> tuple[str, str | None, list[str]] | None:
        """Once a stage has rewritten the text blocks ``texts`` (None keeps a block): the response id, the
        file of the stored original and the texts now shown. None when no block changed, or when the
        original could not be stored (the result then passes unchanged)."""
        if all(r is None for r in rewritten):
            return None
        kept = await self._store_new(result, outcome)
        if kept is None:
            return None
        return (*kept, [t if r is None else r for t, r in zip(texts, rewritten, strict=True)])


def _deduplicated(outcome: Outcome, response_id: str, file: str | None) -> dict[str, Any]:
    """Note on ``outcome`` a deduplicated result (a pointer or an overlap), and return where its original
    is, as ``_meta`` names it."""
    outcome.kept("dedup", response_id, file)
    where: dict[str, Any] = {"response_id": response_id}
    if file:
        where["original_response_file"] = file
    return where


def presented_with(result: Result, content: list[Any], meta: dict[str, Any]) -> Result:
    """What a stage presents: ``result`` with ``content`` instead of its own and the ``meta`` entries
    (``truncation``, ``mcpsqueeze/dedup``) added to its ``_meta``; all else it carries stays."""
    presented = {k: v for k, v in result.items() if k != "content"}
    presented["content"] = content
    presented["_meta"] = {**(presented.get("_meta") or {}), **meta}
    return presented


def laid_out(
    content: list[Any],
    indexes: list[int],
    texts: Sequence[str],
    notice: str | None,
    client: ClientProfile | None,
    head: str | None = None,
) -> list[Any]:
    """The content of a changed result: its text blocks at ``indexes`` replaced by ``texts``, the
    ``notice`` after them; for a client with a profile, one block with the recovery hint first
    (``arrange``; ``head`` when the texts do not open with one), which every client's cut keeps."""
    if client is None or not indexes:
        new_content = list(content)
        for i, text in zip(indexes, texts, strict=True):
            new_content[i] = {**content[i], "text": text}
        if notice is not None:
            new_content.append({"type": "text", "text": notice})
        return new_content
    joined = arrange(list(texts), notice, head)
    first, others = indexes[0], set(indexes[1:])
    kept = (block for i, block in enumerate(content) if i not in others)
    return [{**block, "text": joined} if block is content[first] else block for block in kept]


class DedupStage(StoringStage):
    """Replaces content already returned in this session with a pointer (the tool still ran)."""

    def __init__(
        self,
        store: RecoveryStore,
        workers: Workers,
        count_tokens: Callable[[str], concurrent.futures.Future[int]] | None,
        shared_scope: str | None = None,
    ) -> None:
        super().__init__(store, workers)
        # Overlap dedup: a result that largely repeats an earlier one is shown as what changed
        self._history = _History(OVERLAP_HISTORY_CHARS)
        self._count = count_tokens
        self._seen: dict[str, _Seen] = {}
        # The index of this scope (a session, or a tenant's stateless calls) in the shared dedup index
        # replicas share (only a store with a remote layer keeps one)
        self._shared_scope = shared_scope if store.remote else None

    async def __call__(self, call: Call, result: Result, outcome: Outcome) -> Result:
        if not call.policy.dedup:
            return result
        content = result.get("content")
        if not isinstance(content, list) or not content:
            return result
        size = text_chars(result)
        digest = await self._workers.run_sized(size, content_digest, content, inline_below=_INLINE_LIMIT)
        seen = self._seen.get(digest)
        if seen is None and self._shared_scope is not None:
            seen = await self._shared_seen(digest, call, size)
        if seen is None:
            text = text_of(result)  # the same text accounting counts
            future = self._count(text) if self._count is not None and text else None
            self._seen[digest] = _Seen(call.number, call.tool, size, future)
            if size < MIN_CHARS:
                return result
            return await self._overlap(call, result, outcome, size)
        response_id = new_response_id()
        pointer = render_pointer(
            number=seen.number,
            tool=seen.tool,
            tokens=_counted(seen.tokens),
            chars=seen.chars,
            response_id=response_id,
            how_to_recover=call.voice.see_again(response_id),
        )
        if len(pointer) >= size:  # the pointer would cost as much as the content: show the content
            return result
        kept = await self._store_new(result, outcome, response_id)
        if kept is None:
            return result
        where = _deduplicated(outcome, *kept)
        # The recipe `.truncation // ._meta.truncation` finds every changed result's recovery here;
        # `mcpsqueeze/dedup` keeps what only a pointer has (which call it repeats), for the shim and stats.
        meta = {
            "truncation": {"message": pointer, **where},
            "mcpsqueeze/dedup": {"same_as_call": seen.number, "tool": seen.tool, **where},
        }
        return presented_with(result, [{"type": "text", "text": pointer}], meta)

    async def _overlap(self, call: Call, result: Result, outcome: Outcome, size: int) -> Result:
        """The result as what changed since an earlier one it largely repeats (else unchanged)."""
        content = result["content"]
        if not all(  # a result made only of text blocks (others are never replaced by a delta)
            isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str)
            for b in content
        ):
            return result
        text = "\n".join(b["text"] for b in content)
        name = f"{call.server}:{call.tool}"
        arguments = call_key(call.server, call.tool, call.arguments)
        candidates = self._history.candidates(name, arguments)
        budget = call.policy.budget
        whole = size <= budget
        self._history.add(_Earlier(call.number, name, arguments, text, result, whole))
        if not candidates:
            return result
        # no delta longer than this is shown (see below): a comparison stops once its changes are longer
        limit = min(int(MAX_RATIO * len(text)), budget)
        best = await self._workers.run_sized(
            size, _best_delta, candidates, text, call.number, call.tool, limit, inline_below=_INLINE_LIMIT
        )
        if best is None:
            return result
        earlier, delta = best
        response_id = new_response_id()
        base_id = None if earlier.whole else new_response_id()
        message = render_overlap(
            number=earlier.number,
            tool=call.tool,
            kind=delta.kind,
            unchanged=delta.unchanged,
            total=delta.total,
            chars=len(text) - len(delta.body),
            how_to_recover=call.voice.see_again(response_id),
            base_hint=None if base_id is None else call.voice.see_again(base_id),
        )
        shown = len(message) + len(delta.body)
        if shown > MAX_RATIO * len(text) or shown > budget:
            return result
        if call.client is not None and not call.client.answer_limits().fits(f"{message}\n{delta.body}"):
            return result  # (its lines or bytes) the shrink stage fits it instead
        kept = await self._store_new(result, outcome, response_id)
        if kept is None:
            return result
        # content-addressed: the earlier original is not written twice
        if base_id is not None and await self._store_new(earlier.result, outcome, base_id) is None:
            return result
        # accounted as dedup; `mcpsqueeze/dedup` says it is an overlap
        where = _deduplicated(outcome, *kept)
        overlap = {"overlaps_call": earlier.number, "tool": call.tool, "delta": delta.kind, **where}
        if base_id is not None:
            overlap["overlaps_response_id"] = base_id
        content = [{"type": "text", "text": message}, {"type": "text", "text": delta.body}]
        if call.client is not None:
            content = laid_out(content, [0, 1], [message, delta.body], None, call.client)
        return presented_with(
            result, content, {"truncation": {"message": message, **where}, "mcpsqueeze/dedup": overlap}
        )

    async def _shared_seen(self, digest: str, call: Call, size: int) -> _Seen | None:
        """The first sighting of `digest` in the shared index (recording this one when it is the first)."""
        assert self._shared_scope is not None
        record = dumps({"number": call.number, "tool": call.tool, "chars": size})
        try:
            old = await self._workers.run(self._store.first_seen, self._shared_scope, digest, record)
        except RecoveryError:
            return None  # Redis is down: the content is shown as new, never a pointer to nothing
        if old is None:
            return None
        first = loads(old)
        return _Seen(int(first["number"]), str(first["tool"]), int(first["chars"]), None)


@dataclass(frozen=True, slots=True)
class ShrinkJob:
    """What one shrink is given: the text blocks, the budget, the recovery hint the notice words, the cap on
    each block (--truncate-chars), the call's query terms, the size above which a preview is sized by
    value (--shrink-above), and the client's limits the preview must fit (None: the budget only)."""

    texts: list[str]
    budget: int
    hint: RecoveryHint
    limit: int | None
    terms: Sequence[str]
    above: int | None
    fit: ClientLimits | None = None


#: How many times a preview is shrunk again, smaller, to fit a client's bytes or lines.
_FIT_ATTEMPTS = 4


def shrink_fitting(job: ShrinkJob) -> Shrunk | None:
    """The preview of ``job``; with a client's limits (``job.fit``), one that fits them as the client
    gets it (one block, the hint first), shrunk again with less room while its bytes or lines are over."""
    shrunk = shrink_texts(job.texts, job.budget, job.hint, job.terms, block_limit=job.limit, above=job.above)
    for _ in range(_FIT_ATTEMPTS):
        if shrunk is None or job.fit is None:
            return shrunk
        over = job.fit.over(arrange(shrunk.texts, shrunk.notice, render_notice(shrunk.report, job.hint)))
        if over <= 1.0:
            return shrunk
        budget = int(min(job.budget, sum(map(len, shrunk.texts))) / over * 0.95)
        job = replace(job, budget=max(1, budget), above=None)
        try:
            smaller = shrink_texts(job.texts, job.budget, job.hint, job.terms, block_limit=job.limit)
        except ShrinkError:
            return shrunk  # no smaller preview: the closest one
        shrunk = smaller if smaller is not None else shrunk
    return shrunk


class ShrinkStage(StoringStage):
    """Fits the text content into the budget, storing the complete original first."""

    _in_flight = 0  # shrinks under way in this stage (see _INLINE_SHRINK_ALONE)

    def _shrink_and_store(
        self, job: ShrinkJob, response_id: str, result: Result
    ) -> tuple[Shrunk | None, str | None]:
        """Condense, then (only if that gave a preview) store the original, in ONE worker job: each hop
        to a thread and back costs milliseconds on a busy machine. RecoveryError if it was not stored."""
        shrunk = shrink_fitting(job)
        if shrunk is None:
            return None, None
        return shrunk, _store_original(self._store, response_id, result)

    async def __call__(self, call: Call, result: Result, outcome: Outcome) -> Result:
        policy = call.policy
        if outcome.action == "dedup" or not policy.shrink:
            return result
        budget = policy.budget
        content, indexes = text_blocks(result)
        if not indexes:
            return result
        texts = [content[i]["text"] for i in indexes]
        limit, above = policy.truncate_chars, policy.shrink_above
        longest = max(map(len, texts), default=0)
        total = sum(map(len, texts))
        if (
            policy.toonify
            and above is not None
            and total <= budget
            and all(t.lstrip()[:1] in ("[", "{") for t in texts)
        ):
            above = None  # --toonify: JSON under the budget is shown losslessly as TOON, not sized by value
        fit = call.client.answer_limits() if call.client is not None else None
        if fit is not None and not fit.fits("\n".join(texts)):  # its bytes or lines are over the client's
            budget = min(budget, max(1, int(total / fit.over("\n".join(texts)) * 0.95)))
        elif total <= budget and (limit is None or longest <= limit) and (above is None or total <= above):
            return result
        too_big = self._store.cannot_hold(total)  # chars: no more than the original's bytes
        if too_big is not None:
            outcome.store_failed = too_big
            return result
        if fit is not None:  # the one block the client gets, its hint line included, within the budget too
            fit = replace(fit, chars=budget if fit.chars is None else min(fit.chars, budget))
        terms = query_terms(call.arguments)
        response_id = new_response_id()
        hint = RecoveryHint(response_id, self._store.planned_file(response_id), call.voice)
        job = ShrinkJob(texts, budget, hint, limit, terms, above, fit)
        # a few ms on the loop cost less than two thread hops; less so beside another shrink
        inline_below = _INLINE_SHRINK if self._in_flight else _INLINE_SHRINK_ALONE
        if self._store.remote:  # a network store: always in a worker
            inline_below = 0
        self._in_flight += 1
        try:
            shrunk, file = await self._workers.run_sized(
                total, self._shrink_and_store, job, response_id, result, inline_below=inline_below
            )
        except ShrinkError as exc:
            outcome.store_failed = f"no preview fits the budget: {exc}"
            return result
        except RecoveryError as exc:
            outcome.store_failed = str(exc)
            return result
        finally:
            self._in_flight -= 1
        if shrunk is None:
            return result
        if file != hint.file:  # the file store failed but memory holds it: don't name a missing file
            hint = RecoveryHint(response_id, file, call.voice)
            try:
                shrunk = await self._workers.run(shrink_fitting, replace(job, hint=hint))
            except ShrinkError:
                shrunk = None
            if shrunk is None:
                return result
        # the shim prints the notice on stderr instead
        notice = shrunk.notice if call.voice.notices_inline else None
        texts, head = shrunk.texts, None
        if call.client is not None:  # the hint first: a JSON object's record, else the one-line hint
            texts = [record_first(text, shrunk.truncation) for text in texts]
            head = render_notice(shrunk.report, hint)  # the one-line hint
        new_content = laid_out(content, indexes, texts, notice, call.client, head)
        # a query policy's projection record, carried inside the shrink record
        projection = (result.get("_meta") or {}).get("truncation") if outcome.action == "shrink" else None
        record = shrunk.truncation if projection is None else {**shrunk.truncation, "projection": projection}
        presented = presented_with(result, new_content, {"truncation": record})
        outcome.kept("shrink", response_id, file)
        outcome.report = shrunk.report.as_dict()
        return presented


class ToonStage(StoringStage):
    """``--toonify``: JSON text results that were neither shrunk nor deduplicated are shown as TOON.

    Runs after shrink, so a shrunk preview and its truncation record always stay JSON. TOON is lossless
    for the data but not for the bytes: the original is stored first and named in ``_meta.truncation``
    (``pruned: false``, ``format: toon``); when it cannot be stored the result passes unchanged.
    """

    async def __call__(self, call: Call, result: Result, outcome: Outcome) -> Result:
        if outcome.action != "passthrough" or not call.policy.toonify:  # shrunk, deduplicated or off
            return result
        content, indexes = text_blocks(result)
        if not indexes:
            return result
        texts = [content[i]["text"] for i in indexes]
        rendered = await self._workers.run_sized(
            sum(map(len, texts)), lambda: [toonify_text(text) for text in texts], inline_below=_INLINE_LIMIT
        )
        if call.client is not None:  # TOON has a line per row: it must fit the client's lines too
            fit = call.client.answer_limits()
            rendered = [r if r is None or fit.fits(r) else None for r in rendered]
        kept = await self._keep_rewritten(result, outcome, texts, rendered)
        if kept is None:
            return result
        response_id, file, shown = kept
        hint = RecoveryHint(response_id, file, call.voice)
        record = toon_record(sum(map(len, texts)), sum(map(len, shown)), hint)
        new_content = laid_out(content, indexes, shown, None, None)
        presented = presented_with(result, new_content, {"truncation": record})
        outcome.kept("toon", response_id, file)
        outcome.report = record["report"]  # type: ignore[assignment]
        return presented
