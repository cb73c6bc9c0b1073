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
import logging
import os
import secrets
import stat
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Protocol

from ._errors import UsageError
from .tokens import count_tokens

__all__ = [
    "Accountant",
    "CallObserver",
    "CallRecord",
    "Totals",
    "new_session_id",
    "print_summary",
    "render_summary",
    "summarise_stats_file",
]

logger = logging.getLogger(__name__)


def new_session_id() -> str:
    """Tells sessions apart in a shared stats file (call numbers restart in each session)."""
    return secrets.token_hex(6)


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
    session: str = ""
    call_latency_ms: float = 0.0  # request in -> result presented (backend time included), for metrics


class CallObserver(Protocol):
    """Told about every counted call and every recovery (metrics, the per-call log line)."""

    def on_call(self, record: CallRecord, tokens_before: int, tokens_after: int) -> None: ...

    def on_recover(self, response_id: str, size: int) -> None: ...


@dataclass
class Totals:
    calls: int = 0
    passthrough: int = 0
    deduplicated: int = 0
    shrunk: int = 0
    errors: int = 0
    full: int = 0
    toonified: int = 0  # --toonify: shown as TOON (nothing cut)
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
        elif action == "toon":
            self.toonified += 1
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
        *([f"  shown as TOON    {totals.toonified}"] if totals.toonified else []),
        f"  tokens before    {totals.tokens_before}",
        f"  tokens after     {totals.tokens_after}",
        f"  tokens saved     {totals.saved} ({totals.percent:.1f}%)",
    ]
    if totals.store_failures:
        lines.append(f"  not shrunk because the original could not be stored: {totals.store_failures}")
    return "\n".join(lines)


def print_summary(totals: Totals, quiet: bool = False) -> None:
    """The exit summary on stderr, unless asked for quiet or nothing was called (it would be all zeros)."""
    if not quiet and totals.calls:
        logger.warning(render_summary(totals))


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

    def __init__(self, stats_file: Path | None = None, observers: Iterable[CallObserver] = ()) -> None:
        self.totals = Totals()
        self.observers = list(observers)
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

    def record_recovery(self, response_id: str, size: int) -> None:
        """Enqueue one recovery of an original (a stats line and the observers); returns immediately."""
        self._pool.submit(self._account_recovery, response_id, size, time.time())

    def _account_recovery(self, response_id: str, size: int, when: float) -> None:
        with self._lock:
            if self._stats is not None:
                line = {"time": round(when, 3), "action": "recover", "response_id": response_id}
                line["bytes"] = size
                self._stats.write(json.dumps(line) + "\n")
                self._stats.flush()
        self._tell(lambda o: o.on_recover(response_id, size))

    def _tell(self, event: Any) -> None:
        for observer in self.observers:
            try:
                event(observer)
            except Exception as exc:  # an observer's bug must not stop the accounting
                logger.warning(f"mcpsqueeze: stats observer failed: {exc!r}")

    def _account(self, record: CallRecord) -> None:
        try:
            before = count_tokens(record.before_text)
            after = before if record.after_text == record.before_text else count_tokens(record.after_text)
        except Exception as exc:  # never let accounting take the proxy down
            logger.warning(f"mcpsqueeze: token counting failed: {exc}")
            return
        with self._lock:
            self.totals.add(record.action, before, after, record.store_failed is not None)
            if self._stats is not None:
                line = {
                    "time": round(record.time, 3),
                    "session": record.session,
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
        self._tell(lambda o: o.on_call(record, before, after))

    def close(self, timeout: float = 30.0) -> Totals:
        """Finish pending counts (bounded) and return the totals."""
        done = self._pool.submit(lambda: None)
        try:
            done.result(timeout=timeout)
        except concurrent.futures.TimeoutError:
            logger.warning("mcpsqueeze: token counting did not finish; the summary is partial")
        self._pool.shutdown(wait=False, cancel_futures=True)
        if self._stats is not None:
            self._stats.close()
            self._stats = None
        return self.totals


def summarise_stats_file(path: Path, top: int = 5) -> str:
    """`mcpsqueeze stats PATH`: totals, per tool, per session and the biggest results of a stats file."""
    from .stats_report import load_report, render_text

    return render_text(load_report([path], top))
