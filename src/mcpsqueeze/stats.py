"""Token accounting: counts before/after for every call, off the response path.

The proxy hands each finished call to `Accountant.record`, which only enqueues it; one worker thread
counts tokens (tiktoken releases the GIL) and appends a JSON line to the stats file, flushed per call.
The session summary goes to stderr on exit, never stdout (stdout may be the JSON-RPC channel).
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import errno
import json
import os
import stat
import sys
import threading
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from ._errors import UsageError
from .tokens import count_tokens

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


def _lower_priority() -> None:
    """Counting is background work: on Linux a thread can be niced alone, so it yields the CPU to relaying."""
    with contextlib.suppress(AttributeError, OSError):
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 10)


_STATS_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


def open_stats_file(path: Path) -> IO[str]:
    """Open the stats file for appending: never through a symlink, never a FIFO or device, new ones 0600."""
    try:
        fd = os.open(path, _STATS_FLAGS, 0o600)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise UsageError(
                f"--stats-file {path} is a symlink; refusing to follow it. "
                "Pass the real file, or remove the link."
            ) from None
        if exc.errno == errno.ENXIO:  # a FIFO nobody reads (O_NONBLOCK said so instead of hanging)
            raise UsageError(f"--stats-file {path} is not a regular file; choose a file path.") from None
        raise UsageError(
            f"cannot open --stats-file {path}: {exc.strerror or exc}; choose another path."
        ) from exc
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        os.close(fd)
        raise UsageError(f"--stats-file {path} is not a regular file; choose a file path.")
    os.set_blocking(fd, True)
    return os.fdopen(fd, "a", encoding="utf-8")


class Accountant:
    """Counts tokens in a worker thread and keeps the session totals."""

    def __init__(self, stats_file: Path | None = None) -> None:
        self.totals = Totals()
        self._lock = threading.Lock()
        self._pool = concurrent.futures.ThreadPoolExecutor(
            max_workers=1, thread_name_prefix="mcpsqueeze-tokens"
        )
        self._stats: IO[str] | None = None
        if stats_file is not None:
            self._stats = open_stats_file(stats_file)

    def count(self, text: str) -> concurrent.futures.Future[int]:
        """Count tokens later; callers that need the number soon may poll the future."""
        return self._pool.submit(count_tokens, text)

    def record(self, record: CallRecord) -> None:
        """Enqueue a finished call; returns immediately."""
        self._pool.submit(self._account, record)

    def _account(self, record: CallRecord) -> None:
        try:
            before = count_tokens(record.before_text)
            after = before if record.after_text == record.before_text else count_tokens(record.after_text)
        except Exception as exc:  # never let accounting take the proxy down
            print(f"mcpsqueeze: token counting failed: {exc}", file=sys.stderr)
            return
        with self._lock:
            self.totals.add(record.action, before, after, record.store_failed is not None)
            if self._stats is not None:
                line = {
                    "time": round(record.time, 3),
                    "server": record.server,
                    "tool": record.tool,
                    "call": record.number,
                    "action": record.action,
                    "chars_before": len(record.before_text),
                    "chars_after": len(record.after_text),
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
        done = self._pool.submit(lambda: None)
        try:
            done.result(timeout=timeout)
        except concurrent.futures.TimeoutError:
            print("mcpsqueeze: token counting did not finish; the summary is partial", file=sys.stderr)
        self._pool.shutdown(wait=False, cancel_futures=True)
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
