"""Token accounting: counts before/after for every call, off the response path.

The proxy hands each finished call to `Accountant.record`, which only enqueues it; a helper process counts
tokens (so the vocabulary and the encoding never hold this process's GIL) and a JSON line is appended to
the stats file as soon as a call's figures are in, flushed per call.
The session summary goes to stderr on exit, never stdout (stdout may be the JSON-RPC channel).
"""

from __future__ import annotations

import concurrent.futures
import json
import os
import sys
import threading
import time
from collections import defaultdict, deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from ._counter import TokenCounter

__all__ = ["Accountant", "CallRecord", "Totals", "render_summary", "summarise_stats_file"]


@dataclass
class CallRecord:
    """One finished call, as handed to accounting (texts are counted later, in the worker)."""

    tool: str
    number: int
    action: str
    before_text: str
    after_text: str
    added_latency_ms: float
    server: str = ""
    response_id: str | None = None
    report: dict[str, Any] | None = None
    store_failed: str | None = None
    time: float = field(default_factory=time.time)


@dataclass
class Totals:
    calls: int = 0
    passthrough: int = 0
    deduplicated: int = 0
    shrunk: int = 0
    errors: int = 0
    full: int = 0
    store_failures: int = 0
    tokens_before: int = 0
    tokens_after: int = 0

    @property
    def saved(self) -> int:
        return self.tokens_before - self.tokens_after

    @property
    def percent(self) -> float:
        return 100.0 * self.saved / self.tokens_before if self.tokens_before else 0.0

    def add(self, action: str, before: int, after: int, store_failed: bool = False) -> None:
        self.calls += 1
        if action == "dedup":
            self.deduplicated += 1
        elif action == "shrink":
            self.shrunk += 1
        elif action == "error":
            self.errors += 1
        elif action == "full":
            self.full += 1
        else:
            self.passthrough += 1
        self.store_failures += int(store_failed)
        self.tokens_before += before
        self.tokens_after += after


def render_summary(totals: Totals, title: str = "mcpsqueeze session summary") -> str:
    """The session summary printed to stderr (golden-tested)."""
    lines = [
        f"{title}:",
        f"  calls proxied    {totals.calls}",
        f"  passed through   {totals.passthrough + totals.errors + totals.full}",
        f"  deduplicated     {totals.deduplicated}",
        f"  shrunk           {totals.shrunk}",
        f"  tokens before    {totals.tokens_before}",
        f"  tokens after     {totals.tokens_after}",
        f"  tokens saved     {totals.saved} ({totals.percent:.1f}%)",
    ]
    if totals.store_failures:
        lines.append(f"  not shrunk because the original could not be stored: {totals.store_failures}")
    return "\n".join(lines)


@dataclass
class _Pending:
    """A recorded call waiting for its figures."""

    record: CallRecord
    before: concurrent.futures.Future[int]
    after: concurrent.futures.Future[int]
    sizes: tuple[int, int]

    def ready(self) -> bool:
        return self.before.done() and self.after.done()


class Accountant:
    """Counts tokens in a helper process (`_counter.py`) and keeps the session totals.

    Nothing here blocks the caller: `count` and `record` enqueue, and each call's stats line is written
    (by the counter's reader thread) as soon as its figures are in. `close` waits for the rest.
    """

    def __init__(self, stats_file: Path | None = None) -> None:
        self.totals = Totals()
        self._lock = threading.RLock()  # a future may already be done when `record` adds its callback
        self._counter = TokenCounter()
        # Texts being counted for a call still in the pipeline, by identity: the dedup stage asks for the
        # same text the pipeline already sent, and gets the same figure instead of a second count.
        self._in_flight: dict[int, tuple[str, concurrent.futures.Future[int]]] = {}
        self._order: deque[_Pending] = deque()  # recorded calls, in order, until their line is written
        self._stats: IO[str] | None = None
        if stats_file is not None:
            fd = os.open(stats_file, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC, 0o600)
            self._stats = os.fdopen(fd, "a", encoding="utf-8")

    def count(self, text: str) -> concurrent.futures.Future[int]:
        """Count tokens later; callers that need the number soon may poll the future."""
        with self._lock:
            known = self._in_flight.get(id(text))
        if known is not None and known[0] is text:
            return known[1]
        return self._counter.count(text)

    def begin(self, text: str) -> concurrent.futures.Future[int]:
        """Start counting a call's original text now (while its stages run); `record` finishes the call."""
        future = self._counter.count(text)
        with self._lock:
            self._in_flight[id(text)] = (text, future)
        return future

    def busy(self, delta: int) -> None:
        """+1 when a call enters the pipeline, -1 when it leaves: counting waits for idle time."""
        self._counter.busy(delta)

    def has_room(self) -> bool:
        """False while the texts waiting to be counted exceed their byte cap (see `wait_for_room`)."""
        return self._counter.has_room()

    def wait_for_room(self, timeout: float | None = None) -> bool:
        """Block (in a worker thread) until the counter's queue is under its cap."""
        return self._counter.wait_for_room(timeout)

    def record(self, record: CallRecord) -> None:
        """Enqueue a finished call; returns immediately."""
        with self._lock:
            known = self._in_flight.pop(id(record.before_text), None)
        if known is not None and known[0] is record.before_text:
            before = known[1]
        else:
            before = self._counter.count(record.before_text)
        if record.after_text is record.before_text or record.after_text == record.before_text:
            after = before
        else:
            after = self._counter.count(record.after_text)
        entry = _Pending(record, before, after, (len(record.before_text), len(record.after_text)))
        # Keep only what the line needs: the texts themselves are the counter's to hold (and to free).
        record.before_text = record.after_text = ""
        with self._lock:
            self._order.append(entry)
        before.add_done_callback(lambda _: self._flush())
        if after is not before:
            after.add_done_callback(lambda _: self._flush())

    def _flush(self) -> None:
        """Account every call at the head of the queue whose figures are in: stats lines stay in order."""
        with self._lock:
            while self._order and self._order[0].ready():
                self._account(self._order.popleft())

    def _account(self, entry: _Pending) -> None:
        record = entry.record
        try:
            before = entry.before.result()
            after = entry.after.result()
        except BaseException as exc:  # never let accounting take the proxy down (cancelled at close, too)
            if not isinstance(exc, concurrent.futures.CancelledError):
                print(f"mcpsqueeze: token counting failed: {exc}", file=sys.stderr)
            return
        self.totals.add(record.action, before, after, record.store_failed is not None)
        if self._stats is not None:
            line = {
                "time": round(record.time, 3),
                "server": record.server,
                "tool": record.tool,
                "call": record.number,
                "action": record.action,
                "chars_before": entry.sizes[0],
                "chars_after": entry.sizes[1],
                "tokens_before": before,
                "tokens_after": after,
                "added_latency_ms": round(record.added_latency_ms, 3),
            }
            if record.response_id:
                line["response_id"] = record.response_id
            if record.report:
                line["report"] = record.report
            if record.store_failed:
                line["store_failed"] = record.store_failed
            self._stats.write(json.dumps(line, ensure_ascii=False) + "\n")
            self._stats.flush()

    def close(self, timeout: float = 30.0) -> Totals:
        """Finish pending counts (bounded) and return the totals."""
        if not self._counter.drain(timeout):
            print("mcpsqueeze: token counting did not finish; the summary is partial", file=sys.stderr)
        self._counter.close()
        self._flush()
        with self._lock:
            if self._stats is not None:
                self._stats.close()
                self._stats = None
        return self.totals


def summarise_stats_file(path: Path, top: int = 5) -> str:
    """`mcpsqueeze stats PATH`: totals, per tool, and the biggest results of a stats file."""
    totals = Totals()
    per_tool: dict[str, Totals] = defaultdict(Totals)
    rows: list[dict[str, Any]] = []
    bad = 0
    with path.open(encoding="utf-8") as fh:
        for line in fh:
            if not line.strip():
                continue
            try:
                row = json.loads(line)
                action = str(row["action"])
                before = int(row["tokens_before"])
                after = int(row["tokens_after"])
                tool = str(row["tool"])
            except (ValueError, KeyError, TypeError):
                bad += 1
                continue
            store_failed = bool(row.get("store_failed"))
            totals.add(action, before, after, store_failed)
            per_tool[tool].add(action, before, after, store_failed)
            rows.append(row)
    out = [render_summary(totals, f"{path}: {totals.calls} calls")]
    if per_tool:
        out.append("")
        header = ("tool", "calls", "dedup", "shrunk", "before", "after", "saved")
        out.append("  {:<28} {:>6} {:>6} {:>6} {:>10} {:>10} {:>7}".format(*header))
        for tool, t in sorted(per_tool.items(), key=lambda kv: -kv[1].saved):
            out.append(
                f"  {tool[:28]:<28} {t.calls:>6} {t.deduplicated:>6} {t.shrunk:>6} "
                f"{t.tokens_before:>10} {t.tokens_after:>10} {t.percent:>6.1f}%"
            )
    if rows:
        out.append("")
        out.append("  biggest results (tokens before -> after):")
        for row in sorted(rows, key=lambda r: -int(r["tokens_before"]))[:top]:
            out.append(
                f"  #{row.get('call', '?'):<5} {str(row['tool'])[:28]:<28} {row['tokens_before']:>10} -> "
                f"{row['tokens_after']:<10} {row['action']}"
            )
    if bad:
        out.append(f"\n  skipped {bad} malformed line(s)")
    return "\n".join(out)
