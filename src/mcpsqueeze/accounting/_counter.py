"""Exact o200k token counting in a helper process, so it never competes with relaying for the GIL.

The proxy must answer calls as fast as if it were not there, and counting is pure overhead for the
agent: loading the vocabulary takes a third of a second and encoding runs at ~10 MB/s. Both happen in a
child process (`python -m mcpsqueeze.accounting._counter`), started on the first text, that reads framed
UTF-8 texts on stdin and writes `seq count` lines on stdout. The client side here sends texts from one
writer thread (each `os.write` releases the GIL) and resolves a `Future` per text.

Counting waits for idle time (no call in the pipeline for a moment), except for big texts, which go at
once so the exit never waits long for them. Memory stays bounded: texts wait in a queue capped by
characters (`max_pending`); a new call over the cap waits for room (`wait_for_room`), so a session that
outruns the counter slows down rather than grows. If the helper cannot start or dies, counting falls
back to the in-process tokenizer (`tokens.py`): a figure is never lost, only slower.

In the helper, a text of 16 MiB or more is cut at exact pre-tokenisation boundaries and counted mostly
by fastokens (`_fastcount.py`, ~10x tiktoken's speed, loaded only for such texts), so the exit after a
huge result does not wait for seconds of tiktoken.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import logging
import os
import re
import struct
import subprocess
import sys
import threading
import time
from collections import deque
from collections.abc import Callable
from pathlib import Path
from typing import IO

from .._pipes import widen

logger = logging.getLogger(__name__)

__all__ = ["TokenCounter", "split_exactly"]

_HEADER = struct.Struct(">QQ")  # sequence number, payload length
_MAX_PENDING = 4 * 1024 * 1024  # characters of text queued or in flight before new calls wait for the counter
_EAGER = 2 * 1024 * 1024  # characters: a text this big is counted at once (the exit must not wait for it)
_IDLE = 0.05  # seconds without calls in the pipeline before smaller texts are counted
_SPAWN_IDLE = 0.5  # seconds without calls before the helper is started (unless needed sooner)
_HELPER_WORKERS = 2  # the helper encodes this many texts at once (tiktoken releases the GIL)
_HELPER_IN_FLIGHT = 4 * 1024 * 1024  # bytes the helper holds before it stops reading (one text may exceed it)
_FAST_ABOVE = 16 * 1024 * 1024  # bytes: a text this big is worth loading fastokens for (~2 s of one core)
_FAST_WORKERS = 2  # threads counting with fastokens (it releases the GIL and scales with cores)


def _helper_env() -> dict[str, str]:
    """Our environment, with this package importable however the proxy itself found it."""
    from .._malloc import ENV

    root = str(Path(__file__).resolve().parents[2])
    path = os.environ.get("PYTHONPATH")
    return {**os.environ, **ENV, "PYTHONPATH": root + (os.pathsep + path if path else "")}


class TokenCounter:
    """Counts texts in a helper process; every `count` gets a Future with the exact o200k count."""

    def __init__(self, max_pending: int = _MAX_PENDING) -> None:
        self.max_pending = max_pending
        self._cond = threading.Condition()
        self._queue: deque[tuple[int, str, concurrent.futures.Future[int]]] = deque()
        # Sent to the helper, not yet counted: the text stays here so a dead helper loses no figure.
        self._waiting: dict[int, tuple[str, concurrent.futures.Future[int]]] = {}
        self._pending_bytes = 0
        self._settling = 0  # futures being resolved right now (their callbacks running)
        # Idle-time counting: while calls are being answered, small texts wait (the helper would take the
        # CPU the relay and the backend need); they go when the pipeline has been idle for `_IDLE`, when
        # the queue is half full, when a big text is queued, or when the session ends (`drain`).
        self._active = 0
        self._last_active = 0.0
        self._eager_queued = 0
        self._draining = False
        self._seq = 0
        self._closed = False
        self._proc: subprocess.Popen[bytes] | None = None
        self._writer: threading.Thread | None = None
        self._reader: threading.Thread | None = None
        self._helper_failed = False

    # -- producer side (the event loop; never blocks) ----------------------------------------------------

    def count(self, text: str) -> concurrent.futures.Future[int]:
        future: concurrent.futures.Future[int] = concurrent.futures.Future()
        if not text:
            future.set_result(0)
            return future
        with self._cond:
            if self._closed:
                raise RuntimeError("the token counter is closed")
            self._seq += 1
            self._queue.append((self._seq, text, future))
            self._pending_bytes += len(text)
            self._eager_queued += len(text) >= _EAGER
            if self._writer is None:
                self._writer = threading.Thread(target=self._write_loop, name="mcpsqueeze-count", daemon=True)
                self._writer.start()
            self._cond.notify_all()
        return future

    @property
    def pending_bytes(self) -> int:
        return self._pending_bytes

    def has_room(self) -> bool:
        return self._pending_bytes < self.max_pending

    def wait_for_room(self, timeout: float | None = None) -> bool:
        """Block (in a worker thread) until the queue is under its cap; False on timeout."""
        with self._cond:
            return self._cond.wait_for(
                lambda: self._pending_bytes < self.max_pending or self._closed, timeout
            )

    def busy(self, delta: int) -> None:
        """+1 when a call enters the pipeline, -1 when it leaves: small texts wait while calls run."""
        with self._cond:
            self._active += delta
            self._last_active = time.monotonic()
            if not self._active:
                self._cond.notify_all()

    def _may_send(self, idle: float) -> float | None:
        """None when the head of the queue may go to the helper now, else the seconds to wait first."""
        if (
            self._draining
            or self._closed
            or self._eager_queued
            or self._pending_bytes * 2 >= self.max_pending
        ):
            return None
        if self._active:
            return idle
        left = self._last_active + idle - time.monotonic()
        return left if left > 0 else None

    def drain(self, timeout: float | None = None) -> bool:
        """Count everything now and wait until every text so far has its figure; False on timeout."""
        with self._cond:
            self._draining = True
            self._cond.notify_all()
            return self._cond.wait_for(
                lambda: not self._queue and not self._waiting and not self._settling, timeout
            )

    def close(self) -> None:
        with self._cond:
            self._closed = True
            self._cond.notify_all()
        proc = self._proc
        if proc is not None and proc.stdin is not None:
            with contextlib.suppress(OSError):
                proc.stdin.close()
        if proc is not None:
            try:
                proc.wait(timeout=2)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        with self._cond:
            for _, _, future in self._queue:
                future.cancel()
            for _, future in self._waiting.values():
                future.cancel()
            self._queue.clear()
            self._waiting.clear()

    # -- the writer thread ---------------------------------------------------------------------------------

    def _start_helper(self) -> subprocess.Popen[bytes] | None:
        if self._helper_failed:
            return None
        try:
            proc = subprocess.Popen(
                [sys.executable, "-m", "mcpsqueeze.accounting._counter"],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=None,
                env=_helper_env(),
                close_fds=True,
                start_new_session=True,  # the agent's Ctrl-C goes to the proxy, which closes us in order
            )
        except OSError as exc:
            logger.warning("mcpsqueeze: token counter helper did not start (%s); counting in-process", exc)
            self._helper_failed = True
            return None
        self._proc = proc
        assert proc.stdin is not None
        widen(proc.stdin.fileno())
        self._reader = threading.Thread(
            target=self._read_loop, args=(proc,), name="mcpsqueeze-counted", daemon=True
        )
        self._reader.start()
        return proc

    def _write_loop(self) -> None:
        proc: subprocess.Popen[bytes] | None = None
        started = False
        while True:
            with self._cond:
                while True:
                    self._cond.wait_for(lambda: self._queue or self._closed)
                    if not self._queue:
                        return
                    # Before the helper runs, wait for a longer lull: its start (~0.4 s of CPU) would
                    # slow the calls of this proxy and of the agent's other servers.
                    wait = self._may_send(_IDLE if started else _SPAWN_IDLE)
                    if wait is None:
                        break
                    self._cond.wait(wait)
                seq, text, future = self._queue.popleft()
                self._eager_queued -= len(text) >= _EAGER
                self._waiting[seq] = (text, future)
            if not started:
                proc, started = self._start_helper(), True
            if proc is not None and not self._helper_failed:
                try:
                    self._send(proc, seq, text)
                    continue
                except (OSError, ValueError):
                    self._helper_lost()
                    proc = None
            self._count_here(seq)

    @staticmethod
    def _send(proc: subprocess.Popen[bytes], seq: int, text: str) -> None:
        data = text.encode("utf-8", "surrogatepass")
        assert proc.stdin is not None
        proc.stdin.write(_HEADER.pack(seq, len(data)))
        proc.stdin.write(data)
        proc.stdin.flush()

    def _helper_lost(self) -> None:
        """The helper died: count what it held here (exact figures, just slower)."""
        if self._closed:
            return
        with self._cond:
            if self._helper_failed:
                return
            self._helper_failed = True
        logger.warning("mcpsqueeze: the token counter helper stopped; counting in-process")
        with self._cond:
            lost = list(self._waiting)
        for seq in lost:
            self._count_here(seq)

    def _count_here(self, seq: int) -> None:
        from ._tokens import count_tokens

        with self._cond:
            entry = self._waiting.get(seq)
        if entry is None:
            return
        try:
            value = count_tokens(entry[0])
        except (KeyboardInterrupt, SystemExit):
            raise
        except BaseException as exc:  # never let accounting take the proxy down; tiktoken's panics (on
            # a whitespace run of ~1 M characters) are BaseExceptions, and one killed the reader thread
            self._settle(seq, None, exc)
        else:
            self._settle(seq, value, None)

    def _settle(self, seq: int, value: int | None, error: BaseException | None) -> None:
        with self._cond:
            entry = self._waiting.pop(seq, None)
            if entry is None:
                return  # settled already (the helper answered as it died)
            self._settling += 1
        text, future = entry
        try:  # the future's callbacks (the stats line, the totals) run here, before `drain` can return
            if error is not None:
                future.set_exception(error)
            else:
                assert value is not None
                future.set_result(value)
        finally:
            with self._cond:
                self._settling -= 1
                self._pending_bytes -= len(text)
                self._cond.notify_all()

    def _read_loop(self, proc: subprocess.Popen[bytes]) -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            seq_text, _, count_text = line.partition(b" ")
            try:
                seq, value = int(seq_text), int(count_text)
            except ValueError:
                continue
            if value < 0:
                self._count_here(seq)  # the helper could not count it: try here, for the error message
            else:
                self._settle(seq, value, None)
        self._helper_lost()


# -- the helper process ------------------------------------------------------------------------------------


def _read_exact(stream: IO[bytes], size: int) -> bytes | None:
    chunks: list[bytes] = []
    while size:
        chunk = stream.read(size)
        if not chunk:
            return None
        chunks.append(chunk)
        size -= len(chunk)
    return b"".join(chunks) if len(chunks) != 1 else chunks[0]


# A cut between an ASCII lowercase letter and an ASCII character that is neither a letter nor an
# apostrophe is a boundary of o200k's pre-tokenisation: the letter ends a word piece (only letters, marks
# or a contraction can continue it) and the next piece starts there, whatever came before. BPE runs
# within pieces, so the counts of the parts add up to the count of the whole: exact, and parallel.
_CUT = re.compile(r"[a-z](?=[\x00-\x26\x28-\x40\x5b-\x60\x7b-\x7f])")
_CHUNK = 512 * 1024  # characters per part when one big text is counted on several cores


def split_exactly(text: str, size: int = _CHUNK) -> list[str]:
    """`text` in parts of about `size` characters, cut only where counts add up exactly."""
    parts: list[str] = []
    start = 0
    while len(text) - start > 2 * size:
        match = _CUT.search(text, start + size, start + 2 * size)
        if match is None:
            match = _CUT.search(text, start + 2 * size)
            if match is None:
                break
        parts.append(text[start : match.end()])
        start = match.end()
    parts.append(text[start:])
    return parts


class _Parts:
    """The parts of one big text, taken one at a time by any number of counting threads.

    A fast counter may also take a part a slow one is still on (`steal`): the first figure in counts.
    Each part is counted whole by one tokenizer, so the total is exact whoever counted what."""

    def __init__(self, parts: list[str]) -> None:
        self._parts = parts
        self._values: list[int | None] = [None] * len(parts)
        self._next = 0  # the first part nobody took
        self._stolen: set[int] = set()
        self._left = len(parts)
        self._error: BaseException | None = None
        self._cond = threading.Condition()

    @property
    def finished(self) -> bool:
        return self._left == 0 or self._error is not None

    def _take(self, steal: bool) -> int | None:
        with self._cond:
            if self.finished:
                return None
            if self._next < len(self._parts):
                self._next += 1
                return self._next - 1
            if steal:
                for index in range(len(self._parts)):
                    if self._values[index] is None and index not in self._stolen:
                        self._stolen.add(index)
                        return index
            return None

    def run(
        self,
        count: Callable[[str], int],
        fallback: Callable[[str], int],
        stop: threading.Event | None = None,
        steal: bool = False,
    ) -> None:
        """Count parts until none is left (or `stop` is set); a part `count` fails on goes to `fallback`."""
        while stop is None or not stop.is_set():
            index = self._take(steal)
            if index is None:
                return
            part = self._parts[index]
            try:
                try:
                    value = count(part)
                except Exception:
                    if count is fallback:
                        raise
                    value = fallback(part)
            except BaseException as exc:  # tiktoken's panics are BaseExceptions: report, never hang
                with self._cond:
                    if self._values[index] is None:
                        self._error = exc
                    self._cond.notify_all()
                return
            with self._cond:
                if self._values[index] is None:
                    self._values[index] = value
                    self._left -= 1
                    self._cond.notify_all()

    def total(self) -> int:
        with self._cond:
            self._cond.wait_for(lambda: self.finished)
            if self._error is not None:
                raise self._error
            return sum(v for v in self._values if v is not None)


def _run_niced(job: _Parts, count: Callable[[str], int], stop: threading.Event) -> None:
    """tiktoken on a big text while fastokens loads: only on CPU the load does not need (a niced thread,
    its own: niceness cannot be taken back). Whatever part it is on when fastokens is ready, fastokens
    counts again rather than waiting for it."""
    with contextlib.suppress(AttributeError, OSError):
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 19)
    job.run(count, count, stop)


def _tiktoken_counter() -> Callable[[str], int]:
    """tiktoken's exact count, loaded (~0.35 s) with only what counting needs kept."""
    import gc

    from ._tokens import encoding

    enc = encoding()
    # Counting needs only the Rust core; its Python copy of the 200k ranks is ~28 MB of RSS.
    enc._mergeable_ranks = {}
    gc.collect()
    encode_ordinary = enc.encode_ordinary
    to_buffer = getattr(enc._core_bpe, "encode_to_tiktoken_buffer", None)

    def tokens_in(text: str) -> int:
        """`len(encode_ordinary(text))` without building a Python int per token (~15 % of the time).
        The core's `encode` with no special token allowed splits and merges exactly as
        `encode_ordinary` does (special-token text included, as ordinary text). Lone surrogates (the
        proxy sends them as they are) go through `encode_ordinary`, which replaces them as tiktoken does."""
        if to_buffer is None:
            return len(encode_ordinary(text))
        try:
            view = memoryview(to_buffer(text, set()))
        except UnicodeEncodeError:
            return len(encode_ordinary(text))
        return view.nbytes // view.itemsize

    return tokens_in


def _serve(stdin: IO[bytes], stdout: IO[bytes]) -> None:
    from ._fastcount import FastCounter

    # tiktoken loads in the background while the first text comes in: if that one is big, fastokens
    # starts loading at once too, on the other core.
    loader = concurrent.futures.ThreadPoolExecutor(max_workers=1)
    tiktoken_counter = loader.submit(_tiktoken_counter)
    loader.shutdown(wait=False)
    fast = FastCounter()

    def tokens_in(text: str) -> int:
        return tiktoken_counter.result()(text)

    lock = threading.Lock()
    in_flight = [0]  # bytes read and not yet counted
    cond = threading.Condition()
    parts_pool = concurrent.futures.ThreadPoolExecutor(max_workers=_HELPER_WORKERS)

    def count(text: str, big: bool) -> int:
        if len(text) <= 2 * _CHUNK:
            return tokens_in(text)
        job = _Parts(split_exactly(text))
        if not big or fast.failed:
            for _ in range(_HELPER_WORKERS):
                parts_pool.submit(job.run, tokens_in, tokens_in)
            return job.total()
        # tiktoken starts on the first parts at once, on spare CPU; fastokens takes the rest when it is
        # ready (~2 s of one core to load) and tiktoken, ~10x slower a part, stops.
        ready = threading.Event()
        threading.Thread(target=_run_niced, args=(job, tokens_in, ready), daemon=True).start()

        def fast_worker() -> None:
            counter = None
            while counter is None and not job.finished and not fast.failed:
                counter = fast.wait(0.05)
            if counter is not None:
                ready.set()
                job.run(counter, tokens_in, steal=True)
            elif not job.finished:  # fastokens failed: tiktoken counts the rest at full priority
                job.run(tokens_in, tokens_in)

        for _ in range(_FAST_WORKERS):  # threads of their own: fastokens' per-thread buffers go with them
            threading.Thread(target=fast_worker, daemon=True).start()
        return job.total()

    def work(seq: int, data: bytes, big: bool) -> None:
        try:
            value = count(data.decode("utf-8", "surrogatepass"), big)
        except BaseException:  # tiktoken's panics too: the proxy then counts it (or reports the error)
            value = -1
        finally:
            if big:
                fast.release()
        with lock:
            stdout.write(b"%d %d\n" % (seq, value))
            stdout.flush()
        with cond:
            in_flight[0] -= len(data)
            cond.notify_all()

    with concurrent.futures.ThreadPoolExecutor(max_workers=_HELPER_WORKERS) as pool:
        while True:
            header = _read_exact(stdin, _HEADER.size)
            if header is None:
                break
            seq, size = _HEADER.unpack(header)
            big = size >= _FAST_ABOVE
            if big:  # start loading fastokens now, while the text itself is still coming through the pipe
                fast.acquire()
            data = _read_exact(stdin, size)
            if data is None:
                break
            with cond:
                cond.wait_for(lambda: in_flight[0] < _HELPER_IN_FLIGHT)
                in_flight[0] += len(data)
            pool.submit(work, seq, data, big)
    parts_pool.shutdown()


def main() -> None:
    # Not niced: the helper only ever takes a core the relay is not using (this is a separate process),
    # and a niced one starves on a busy machine, which makes the exit wait for its figures.
    with contextlib.suppress(KeyboardInterrupt, BrokenPipeError):
        _serve(sys.stdin.buffer, sys.stdout.buffer)
    with contextlib.suppress(OSError):
        sys.stdout.flush()
    os._exit(0)  # every answer is written: skip freeing the vocabulary's 200k objects (~0.5 s)


if __name__ == "__main__":
    main()
