"""Exact o200k token counting on one background thread: every `count` gets a Future, and no call waits for
one (counting is accounting, never a gate).

It runs in the proxy's process without holding up the relay: tiktoken's core releases the GIL while it
encodes, and a text is counted in spans of at most `_tokens.SPAN` characters, so the interpreter is held
only for moments between spans, and the memory a count takes is bounded whatever the text's size. Small
texts wait for idle time (the counting would take the CPU the relay and the backend need); big ones, a
backlog over `max_pending` characters, or `drain` count at once. A text is held until counted. The
vocabulary loads after a longer lull (its build holds the interpreter for a few hundred milliseconds).
With the `fastokens` setting, texts of `_FAST_ABOVE` characters or more are counted with fastokens, loaded
for the first such text and dropped `_KEEP` seconds after the last.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import gc
import logging
import threading
import time
from collections import deque
from collections.abc import Callable
from typing import Any

from . import _tokens

logger = logging.getLogger(__name__)

__all__ = ["TokenCounter"]

_MAX_PENDING = 4 * 1024 * 1024  # characters queued: over this the counter counts at once (no idle wait)
_EAGER = 2 * 1024 * 1024  # characters: a text this big is counted at once (the exit must not wait for it)
_IDLE = 0.05  # seconds without calls in the pipeline before smaller texts are counted
_LOAD_IDLE = 0.5  # seconds without calls before the vocabulary is loaded (unless needed sooner)
_FAST_ABOVE = 16 * 1024 * 1024  # characters: worth loading fastokens for (its load takes seconds and memory)
_KEEP = 30.0  # seconds a loaded fastokens stays after the last huge text is counted


class TokenCounter:
    """Counts texts on a worker thread; every `count` gets a Future with the exact o200k count."""

    def __init__(self, max_pending: int = _MAX_PENDING, fastokens: bool = False) -> None:
        self.max_pending = max_pending
        self.fastokens = fastokens  # fastokens may count huge texts (the `fastokens` setting)
        self._cond = threading.Condition()
        self._queue: deque[tuple[str, concurrent.futures.Future[int]]] = deque()
        self._pending_bytes = 0  # characters queued or being counted
        self._counting: concurrent.futures.Future[int] | None = None  # being counted or settled
        self._active = 0  # calls in the pipeline
        self._last_active = 0.0
        self._eager_queued = 0
        self._draining = False
        self._closed = False
        self._worker: threading.Thread | None = None
        self._fast: Callable[[str], int] | None = None
        self._fast_failed = False
        self._fast_used = 0.0

    # -- the caller's side (the event loop; never blocks) ----------------------------------------------

    def count(self, text: str) -> concurrent.futures.Future[int]:
        future: concurrent.futures.Future[int] = concurrent.futures.Future()
        if not text:
            future.set_result(0)
            return future
        with self._cond:
            if self._closed:
                raise RuntimeError("the token counter is closed")
            self._queue.append((text, future))
            self._pending_bytes += len(text)
            self._eager_queued += len(text) >= _EAGER
            self._start_worker()
            # Wake the worker only when it must act on this text (it looks again on its own within `_IDLE`
            # while texts wait): a wake-up per call costs the relay a thread switch per answer.
            if len(self._queue) == 1 or len(text) >= _EAGER or self._pending_bytes * 2 >= self.max_pending:
                self._cond.notify_all()
        return future

    def start(self) -> None:
        """Start the worker thread now rather than on the first text."""
        with self._cond:
            if not self._closed:
                self._start_worker()

    def _start_worker(self) -> None:
        if self._worker is None:  # (under self._cond)
            self._worker = threading.Thread(target=self._work, name="mcpsqueeze-count", daemon=True)
            self._worker.start()

    @property
    def pending_bytes(self) -> int:
        return self._pending_bytes

    def busy(self, delta: int) -> None:
        """+1 when a call enters the pipeline, -1 when it leaves: small texts wait while calls run."""
        with self._cond:
            self._active += delta
            self._last_active = time.monotonic()

    def drain(self, timeout: float | None = None) -> bool:
        """Count everything now and wait until every text so far has its figure; False on timeout."""
        with self._cond:
            self._draining = True
            self._cond.notify_all()
            return self._cond.wait_for(lambda: not self._queue and self._counting is None, timeout)

    def close(self) -> None:
        """Stop counting (the text being counted stops at its next span); what has no figure is cancelled."""
        with self._cond:
            self._closed = True
            futures = [future for _, future in self._queue]
            if self._counting is not None:
                futures.append(self._counting)
            self._queue.clear()
            self._cond.notify_all()
        for future in futures:
            future.cancel()

    # -- the worker thread -------------------------------------------------------------------------------

    def _until_work(self, idle: float) -> float | None:
        """Seconds until the worker has work (0: now; None: none until woken): counting the head of the
        queue, or dropping a fastokens unused for `_KEEP` seconds."""
        if not self._queue:
            return None if self._fast is None else max(0.0, self._fast_used + _KEEP - time.monotonic())
        if self._draining or self._eager_queued or self._pending_bytes * 2 >= self.max_pending:
            return 0.0
        if self._active:
            return min(idle, _IDLE)  # looked at again soon: nobody wakes the worker when calls end
        return max(0.0, self._last_active + idle - time.monotonic())

    def _work(self) -> None:
        loaded = False
        while True:
            with self._cond:
                while not self._closed:
                    wait = self._until_work(_IDLE if loaded else _LOAD_IDLE)
                    if wait == 0:
                        break
                    self._cond.wait(wait)
                if self._closed:
                    return
                item = self._queue.popleft() if self._queue else None
                if item is not None:
                    self._eager_queued -= len(item[0]) >= _EAGER
                    self._counting = item[1]
            if item is None:
                self._drop_fast()  # outside the lock: freeing its tables takes a while
                continue
            self._settle(*item)
            del item  # a counted text is not held while the worker waits for the next
            loaded = True

    def _settle(self, text: str, future: concurrent.futures.Future[int]) -> None:
        """Count `text` and resolve its future with the figure, or with the error."""
        value: int | BaseException
        try:
            value = self._tokens_of(text)
        except (KeyboardInterrupt, SystemExit):
            raise
        except BaseException as exc:  # accounting never takes the proxy down; tiktoken panics too
            value = exc
        # The future's callbacks (the stats line, the totals) run here, before `drain` can return.
        with contextlib.suppress(concurrent.futures.InvalidStateError):  # cancelled by `close`
            if isinstance(value, BaseException):
                future.set_exception(value)
            else:
                future.set_result(value)
        with self._cond:
            self._counting = None
            self._pending_bytes -= len(text)
            self._cond.notify_all()

    def _tokens_of(self, text: str) -> int:
        """The exact count, span by span (see `_tokens.SPAN`): a span that repeats the one before it (a run
        of one letter is one span over and over) is not counted again."""
        fast = self._fastokens() if len(text) >= _FAST_ABOVE else None
        encode = _tokens.encoding().encode_ordinary
        total, last, last_count = 0, "", 0
        for start, end in _tokens.spans(text):
            if self._closed:
                raise concurrent.futures.CancelledError
            span = text[start:end]
            if span != last:
                last = span
                try:
                    last_count = fast(span) if fast else len(encode(span))
                except Exception:  # fastokens refuses lone surrogates: tiktoken counts those
                    last_count = len(encode(span))
            total += last_count
        if fast is not None:
            self._fast_used = time.monotonic()  # kept for `_KEEP` seconds from here
        return total

    def _fastokens(self) -> Callable[[str], int] | None:
        """fastokens' counter when the setting allows it; loaded on first need (seconds, ~190 MB)."""
        if not self.fastokens or self._fast_failed:
            return None
        if self._fast is None:
            try:
                self._fast = _tokens.load_fastokens()
            except ImportError:
                logger.debug("fastokens is not installed: big texts are counted with tiktoken")
            except Exception as exc:  # any failure of the optional counter: tiktoken counts, as without it
                logger.warning(
                    "mcpsqueeze: fastokens did not load (%s); counting big texts with tiktoken", exc
                )
            self._fast_failed = self._fast is None
        return self._fast

    def _drop_fast(self) -> None:
        """Let go of fastokens and give its tables back to the system (glibc keeps freed heap)."""
        self._fast = None
        gc.collect()
        with contextlib.suppress(OSError, AttributeError):
            import ctypes

            libc: Any = ctypes.CDLL("libc.so.6")
            libc.malloc_trim(0)
