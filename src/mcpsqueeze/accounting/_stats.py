"""Token accounting: counts before and after for every call, off the response path: `record` only enqueues,
the counter (`_counter.py`) counts in idle time, and each call's stats line is appended as soon as its
figures are in. The session summary goes to stderr, never stdout (it may be the JSON-RPC channel).
"""

from __future__ import annotations

import concurrent.futures
import errno
import json
import logging
import os
import stat
import threading
import time
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Protocol

from .._errors import UsageError
from ._counter import TokenCounter

__all__ = [
    "Accountant",
    "CallObserver",
    "CallRecord",
    "Totals",
    "clock",
    "counted",
    "new_session_id",
    "print_summary",
    "render_summary",
]

logger = logging.getLogger(__name__)
_SAY_STILL_COUNTING = 2.0  # seconds the exit waits for the counts before saying they are still running


def new_session_id() -> str:
    """Tells sessions apart in a shared stats file (call numbers restart in each session)."""
    return os.urandom(6).hex()  # `secrets.token_hex` without importing OpenSSL at start-up


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
    # The profile of the client that read the result, and which part of the original its model reads
    # ("text", "structuredContent" or "both"): the tokens counted are of that part (_clients.py).
    client: str | None = None
    seen: str = "text"
    # Set by `Accountant.record`, which then lets go of the texts (the counter holds them until counted).
    chars_before: int = 0
    chars_after: int = 0


class CallObserver(Protocol):
    """Told about every counted call and every recovery (metrics, the per-call log line)."""

    def on_call(self, record: CallRecord, tokens_before: int, tokens_after: int) -> None: ...

    def on_recover(self, response_id: str, size: int) -> None: ...


_KINDS = {"dedup": "deduplicated", "shrink": "shrunk", "error": "errors", "full": "full", "toon": "toonified"}


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
    uncounted: int = 0  # calls whose tokens could not be counted: in `calls`, not in the token figures
    recovered: int = 0  # originals read back, through any door (the recover tool, mcpsq, the APIs)
    tokens_before: int = 0
    tokens_after: int = 0
    # calls counted as a client's model reads them, by profile: the summary says which were
    clients: dict[str, int] = field(default_factory=dict)

    @property
    def saved(self) -> int:
        return self.tokens_before - self.tokens_after

    @property
    def percent(self) -> float:
        return 100.0 * self.saved / self.tokens_before if self.tokens_before else 0.0

    def add(
        self,
        action: str,
        before: int | None,
        after: int | None,
        store_failed: bool = False,
        client: str | None = None,
    ) -> None:
        """One call; `before`/`after` None when its tokens could not be counted (it is then `uncounted`);
        `client` the profile whose model's view was counted."""
        self.calls += 1
        if client is not None:
            self.clients[client] = self.clients.get(client, 0) + 1
        kind = _KINDS.get(action, "passthrough")
        setattr(self, kind, getattr(self, kind) + 1)
        self.store_failures += int(store_failed)
        if before is None or after is None:
            self.uncounted += 1
            return
        self.tokens_before += before
        self.tokens_after += after


def render_summary(totals: Totals, title: str = "mcpsqueeze session summary") -> str:
    """The session summary printed to stderr (golden-tested)."""
    lines = [
        f"{title}:",
        f"  calls proxied    {totals.calls}",
        f"  passed through   {totals.passthrough + totals.errors + totals.full}{_split(totals)}",
        f"  deduplicated     {totals.deduplicated}",
        f"  shrunk           {totals.shrunk}",
        *([f"  shown as TOON    {totals.toonified}"] if totals.toonified else []),
        f"  tokens before    {totals.tokens_before}",
        f"  tokens after     {totals.tokens_after}",
        f"  tokens saved     {totals.saved} ({totals.percent:.1f}%)",
    ]
    if totals.clients:
        lines.append(f"  tokens counted   as each client's model reads them ({_clients(totals)})")
    if totals.uncounted:
        them = "it" if totals.uncounted == 1 else "them"
        lines.append(
            f"  not counted      {counted(totals.uncounted, 'call')} (the token counter failed on {them}; "
            f"the token figures above leave {them} out)"
        )
    if totals.recovered:
        lines.append(f"  recovered        {totals.recovered}")
    if totals.store_failures:
        lines.append(f"  not shrunk because the original could not be stored: {totals.store_failures}")
    return "\n".join(lines)


def counted(n: int, noun: str, width: int = 0) -> str:
    """`1 call`, `2 calls` (the number right-aligned in `width`)."""
    return f"{n:>{width}} {noun}{'' if n == 1 else 's'}"


def clock(when: float, with_date: bool = True) -> str:
    """A local time as the report shows it ("-" for none)."""
    if not when:
        return "-"
    return time.strftime("%Y-%m-%d %H:%M:%S" if with_date else "%H:%M:%S", time.localtime(when))


def _clients(totals: Totals) -> str:
    """ "claude-code: 39 calls" per profile, and the calls of clients without one."""
    parts = [f"{name}: {counted(n, 'call')}" for name, n in sorted(totals.clients.items())]
    other = totals.calls - sum(totals.clients.values())
    if other:
        parts.append(f"any other client: {counted(other, 'call')}")
    return "; ".join(parts)


def _split(totals: Totals) -> str:
    """What "passed through" counts, named as --json names it, when it is more than unchanged results
    (so "passed through 8" reads as "passthrough 5, errors 3" does)."""
    if not (totals.errors or totals.full):
        return ""
    parts = [f"passthrough {totals.passthrough}", f"errors {totals.errors}"]
    if totals.full:
        parts.append(f"full {totals.full}")
    return f" ({', '.join(parts)})"


def print_summary(totals: Totals, quiet: bool = False) -> None:
    """The exit summary on stderr, unless asked for quiet or nothing was called (it would be all zeros)."""
    if not quiet and (totals.calls or totals.recovered):
        logger.warning(render_summary(totals))


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


@dataclass
class _Pending:
    """A recorded call waiting for its figures."""

    record: CallRecord
    before: concurrent.futures.Future[int]
    after: concurrent.futures.Future[int]

    def ready(self) -> bool:
        return self.before.done() and self.after.done()


@dataclass
class _Recovery:
    """A recovery, queued behind the calls before it: its line (and the metrics' label for it, learned
    from the call that stored the original) come after that call's."""

    response_id: str
    size: int
    when: float

    def ready(self) -> bool:
        return True


class Accountant:
    """Counts tokens in the background and keeps the session totals; nothing here blocks the caller."""

    def __init__(
        self, stats_file: Path | None = None, observers: Iterable[CallObserver] = (), fastokens: bool = False
    ) -> None:
        self.totals = Totals()
        self.observers = list(observers)
        self._lock = threading.RLock()  # a future may already be done when `record` adds its callback
        self._counter = TokenCounter(fastokens=fastokens)
        # Texts being counted for a call still in the pipeline, by identity (the entry keeps the text alive,
        # so its id is not reused): the dedup stage asks for the same text the pipeline already sent, and
        # gets the same figure instead of a second count.
        self._in_flight: dict[int, tuple[str, concurrent.futures.Future[int]]] = {}
        # Recorded calls and recoveries, in order, until their line is written.
        self._order: deque[_Pending | _Recovery] = deque()
        self._stats: IO[str] | None = None
        if stats_file is not None:
            self._stats = open_stats_file(stats_file)

    def count(self, text: str) -> concurrent.futures.Future[int]:
        """Count tokens later; callers that need the number soon may poll the future."""
        with self._lock:
            known = self._in_flight.get(id(text))
        return known[1] if known is not None else self._counter.count(text)

    def begin(self, text: str) -> concurrent.futures.Future[int]:
        """Start counting a call's original text now (while its stages run); `record` finishes the call."""
        future = self._counter.count(text)
        with self._lock:
            self._in_flight[id(text)] = (text, future)
        return future

    def forget(self, text: str) -> None:
        """A call begun with `text` will not be recorded (it was cancelled): its text is not kept for it."""
        with self._lock:
            self._in_flight.pop(id(text), None)

    def start(self) -> None:
        """Get the counting ready before the first call (its thread), so that call does not wait for it."""
        self._counter.start()

    def busy(self, delta: int) -> None:
        """+1 when a call enters the pipeline, -1 when it leaves: counting waits for idle time."""
        self._counter.busy(delta)

    def record(self, record: CallRecord) -> None:
        """Enqueue a finished call; returns immediately."""
        with self._lock:
            known = self._in_flight.pop(id(record.before_text), None)
        before = known[1] if known is not None else self._counter.count(record.before_text)
        after = before if record.after_text == record.before_text else self._counter.count(record.after_text)
        record.chars_before, record.chars_after = len(record.before_text), len(record.after_text)
        entry = _Pending(record, before, after)
        # Keep only what the line needs: the texts themselves are the counter's to hold (and to free).
        record.before_text = record.after_text = ""
        with self._lock:
            self._order.append(entry)
        before.add_done_callback(lambda _: self._flush())
        if after is not before:
            after.add_done_callback(lambda _: self._flush())

    def record_recovery(self, response_id: str, size: int) -> None:
        """One recovery of an original: a stats line and the observers, in order after the calls before it."""
        with self._lock:
            self._order.append(_Recovery(response_id, size, time.time()))
        self._flush()

    def _account_recovery(self, entry: _Recovery) -> None:
        self.totals.recovered += 1
        if self._stats is not None:
            line = {"time": round(entry.when, 3), "action": "recover", "response_id": entry.response_id}
            self._stats.write(json.dumps({**line, "bytes": entry.size}) + "\n")
            self._stats.flush()
        self._tell(lambda o: o.on_recover(entry.response_id, entry.size))

    def _tell(self, event: Any) -> None:
        for observer in self.observers:
            try:
                event(observer)
            except Exception as exc:  # an observer's bug must not stop the accounting
                logger.warning(f"mcpsqueeze: stats observer failed: {exc!r}")

    def _flush(self) -> None:
        """Account every call at the head of the queue whose figures are in: stats lines stay in order."""
        with self._lock:
            while self._order and self._order[0].ready():
                entry = self._order.popleft()
                if isinstance(entry, _Recovery):
                    self._account_recovery(entry)
                else:
                    self._account(entry)

    def _uncounted(self) -> tuple[int, int]:
        """(calls, characters) still waiting for their figures."""
        with self._lock:
            waiting = [e for e in self._order if isinstance(e, _Pending) and not e.ready()]
        return len(waiting), sum(e.record.chars_before + e.record.chars_after for e in waiting)

    def _account(self, entry: _Pending) -> None:
        record = entry.record
        before: int | None
        after: int | None
        failed = ""
        try:
            before = entry.before.result()
            after = entry.after.result()
        except BaseException as exc:  # never let accounting take the proxy down (cancelled at close, too)
            before = after = None  # the call is still counted, as one whose tokens are missing
            failed = "not finished" if isinstance(exc, concurrent.futures.CancelledError) else repr(exc)
            if failed != "not finished":
                logger.warning("mcpsqueeze: token counting failed: %s", failed)
        self.totals.add(record.action, before, after, record.store_failed is not None, record.client)
        if self._stats is not None:
            line = {
                "time": round(record.time, 3),
                "session": record.session,
                "server": record.server,
                "tool": record.tool,
                "call": record.number,
                "action": record.action,
                "chars_before": record.chars_before,
                "chars_after": record.chars_after,
                "tokens_before": before,
                "tokens_after": after,
                "added_latency_ms": round(record.added_latency_ms, 3),
            }
            if record.client is not None:  # which part was counted: what this client's model reads
                line.update(client=record.client, seen=record.seen)
            optional = {
                "response_id": record.response_id,
                "report": record.report,
                "store_failed": record.store_failed,
                "uncounted": failed,
            }
            line.update({key: value for key, value in optional.items() if value})
            self._stats.write(json.dumps(line, ensure_ascii=False) + "\n")
            self._stats.flush()
        if before is not None and after is not None:
            self._tell(lambda o: o.on_call(record, before, after))

    def close(self, timeout: float = 30.0) -> Totals:
        """Finish pending counts (bounded) and return the totals; after `_SAY_STILL_COUNTING` seconds it says
        what is left (counting never held a call up, so it may still be running), past `timeout` what it
        lacks."""
        if not self._counter.drain(min(_SAY_STILL_COUNTING, timeout)):
            left, chars = self._uncounted()
            logger.warning(
                f"mcpsqueeze: still counting the tokens of {left} call(s) ({chars:,} characters); "
                "the summary follows when they are counted"
            )
            if not self._counter.drain(max(0.0, timeout - _SAY_STILL_COUNTING)):
                left, chars = self._uncounted()
                logger.warning(
                    f"mcpsqueeze: token counting did not finish in {timeout:g} s; the summary counts "
                    f"{counted(left, 'call')} ({chars:,} characters) without their tokens"
                )
        self._counter.close()
        self._flush()
        with self._lock:
            if self._stats is not None:
                self._stats.close()
                self._stats = None
        return self.totals
