"""The result stages: dedup, then shrink. Glue between the pure engines and the recovery store.

Heavy work (hashing and condensing big results, writing files) runs in a bounded worker pool so one
50 MB result never stalls the other calls in flight.
"""

from __future__ import annotations

import concurrent.futures
import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, TypeVar

import anyio

from ._errors import RecoveryError, ShrinkError
from ._jsonbytes import dumps
from .dedup import content_digest, recover_hint, render_pointer
from .pipeline import Call, Outcome, Result, text_of
from .recovery import RecoveryStore, Stored, new_response_id

if TYPE_CHECKING:
    from .shrink import RecoveryHint, Shrunk

__all__ = ["DedupStage", "ShrinkStage", "Workers", "original_bytes"]

T = TypeVar("T")
_INLINE_LIMIT = 256 * 1024  # below this, hashing inline (~1 ms) is cheaper than a thread hop under load


class Workers:
    """A bounded pool for CPU- and disk-bound stage work."""

    def __init__(self, jobs: int = 4) -> None:
        self._limiter = anyio.CapacityLimiter(jobs)

    async def run(self, func: Callable[..., T], *args: Any) -> T:
        return await anyio.to_thread.run_sync(functools.partial(func, *args), limiter=self._limiter)


def original_bytes(result: Result) -> bytes:
    """The complete CallToolResult as stored for recovery."""
    return dumps(result)


def _store_original(store: RecoveryStore, response_id: str, result: Result) -> Stored:
    """Serialise and store in one worker job: a 50 MB original is never serialised on the event loop."""
    return store.store(response_id, original_bytes(result))


def _shrink_and_store(
    texts: list[str], budget: int, hint: RecoveryHint, store: RecoveryStore, response_id: str, result: Result
) -> tuple[Shrunk | None, Stored | None]:
    """Condense, then (only if that gave a preview) store the original; RecoveryError if it was not stored."""
    from .shrink import shrink_texts

    shrunk = shrink_texts(texts, budget, hint)
    if shrunk is None:
        return None, None
    return shrunk, _store_original(store, response_id, result)


def _size(result: Result) -> int:
    content = result.get("content")
    if not isinstance(content, list):
        return 0
    return sum(len(b.get("text", "")) if isinstance(b, dict) else 0 for b in content)


@dataclass
class _Seen:
    number: int
    tool: str
    chars: int
    tokens: concurrent.futures.Future[int] | None


class DedupStage:
    """Replaces content already returned in this session with a pointer (the tool still ran)."""

    def __init__(
        self,
        store: RecoveryStore,
        workers: Workers,
        count_tokens: Callable[[str], concurrent.futures.Future[int]] | None,
        recover_tool: str | None,
    ) -> None:
        self._store = store
        self._workers = workers
        self._count = count_tokens
        self.recover_tool = recover_tool
        self._seen: dict[str, _Seen] = {}

    async def __call__(self, call: Call, result: Result, outcome: Outcome) -> Result:
        content = result.get("content")
        if not isinstance(content, list) or not content:
            return result
        size = _size(result)
        if size >= _INLINE_LIMIT:
            digest = await self._workers.run(content_digest, content)
        else:
            digest = content_digest(content)
        seen = self._seen.get(digest)
        if seen is None:
            text = text_of(result)  # the same text accounting counts
            future = self._count(text) if self._count is not None and text else None
            self._seen[digest] = _Seen(call.number, call.tool, size, future)
            return result
        if seen.tokens is not None and seen.tokens.done() and seen.tokens.exception() is None:
            tokens, approximate = seen.tokens.result(), False
        else:
            tokens, approximate = max(1, seen.chars // 4), True
        response_id = new_response_id()
        pointer = render_pointer(
            number=seen.number,
            tool=seen.tool,
            tokens=tokens,
            approximate=approximate,
            response_id=response_id,
            how_to_recover=recover_hint(response_id, recover_tool=self.recover_tool),
        )
        if len(pointer) >= size:  # the pointer would cost as much as the content: show the content
            return result
        try:
            stored = await self._workers.run(_store_original, self._store, response_id, result)
        except RecoveryError as exc:
            outcome.store_failed = str(exc)
            return result
        outcome.action = "dedup"
        outcome.dedup_of = seen.number
        outcome.response_id = response_id
        outcome.original_file = stored.file
        presented = {k: v for k, v in result.items() if k != "content"}
        presented["content"] = [{"type": "text", "text": pointer}]
        meta = dict(presented.get("_meta") or {})
        meta["mcpsqueeze/dedup"] = {
            "same_as_call": seen.number,
            "tool": seen.tool,
            "response_id": response_id,
            **({"original_response_file": stored.file} if stored.file else {}),
        }
        presented["_meta"] = meta
        return presented


class ShrinkStage:
    """Fits the text content into the budget, storing the complete original first."""

    def __init__(
        self,
        store: RecoveryStore,
        workers: Workers,
        budget: int,
        mode: Literal["mcp", "shell"],
        recover_tool: str = "squeeze_recover",
    ) -> None:
        self._store = store
        self._workers = workers
        self.budget = budget
        self._mode = mode
        self.recover_tool = recover_tool

    async def __call__(self, call: Call, result: Result, outcome: Outcome) -> Result:
        if outcome.action == "dedup":
            return result
        content = result.get("content")
        if not isinstance(content, list):
            return result
        indexes = [
            i
            for i, b in enumerate(content)
            if isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str)
        ]
        texts = [content[i]["text"] for i in indexes]
        if sum(map(len, texts)) <= self.budget:
            return result
        # The engine is imported on the first result over the budget: not on the way to the first answer.
        from .shrink import RecoveryHint, shrink_texts

        response_id = new_response_id()
        hint = RecoveryHint(response_id, self._store.planned_file(response_id), self._mode, self.recover_tool)
        try:  # one worker job, not two: each hop to a thread and back costs ms on a busy machine
            shrunk, stored = await self._workers.run(
                _shrink_and_store, texts, self.budget, hint, self._store, response_id, result
            )
        except ShrinkError as exc:
            outcome.store_failed = f"no preview fits the budget: {exc}"
            return result
        except RecoveryError as exc:
            outcome.store_failed = str(exc)
            return result
        if shrunk is None or stored is None:
            return result
        if stored.file != hint.file:  # the file store failed but memory holds it: don't name a missing file
            hint = RecoveryHint(response_id, stored.file, self._mode, self.recover_tool)
            try:
                shrunk = await self._workers.run(shrink_texts, texts, self.budget, hint)
            except ShrinkError:
                shrunk = None
            if shrunk is None:
                return result
        new_content = list(content)
        for i, text in zip(indexes, shrunk.texts, strict=True):
            new_content[i] = {**content[i], "text": text}
        if shrunk.notice and self._mode == "mcp":  # the shim prints the notice on stderr instead
            new_content.append({"type": "text", "text": shrunk.notice})
        presented = {k: v for k, v in result.items() if k != "content"}
        presented["content"] = new_content
        meta = dict(presented.get("_meta") or {})
        meta["truncation"] = shrunk.truncation
        presented["_meta"] = meta
        outcome.action = "shrink"
        outcome.response_id = response_id
        outcome.original_file = stored.file
        outcome.report = shrunk.report.as_dict()
        return presented
