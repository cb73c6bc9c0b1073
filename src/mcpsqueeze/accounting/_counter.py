"""Exact o200k token counting in a helper process (`_counter.main`), so it never competes with relaying
for the GIL: it reads framed UTF-8 texts on stdin and writes `seq count` lines;
here one writer thread sends the texts and a `Future` per text is resolved.

Counting is accounting, never a gate: no call waits for it. Small texts wait for idle time; big ones,
or a backlog over `max_pending` characters, go at once; a text is held until counted. If the helper
cannot start or dies, the in-process tokenizer counts: a figure is never lost. Memory is bounded per
character: frames of `_FRAME` characters, spans of at most `_tokens.SPAN`. The helper runs under a data
cap, dies with the proxy (PR_SET_PDEATHSIG, and the end of its input), and loads fastokens only for
texts of `_FAST_ABOVE` characters or more, when the `fastokens` setting allows it.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import logging
import os
import queue
import struct
import subprocess
import sys
import threading
import time
from collections import deque
from collections.abc import Callable
from pathlib import Path
from typing import IO

from ._tokens import SPAN, next_cut

logger = logging.getLogger(__name__)

__all__ = ["TokenCounter"]

_HEADER = struct.Struct(">QIB")  # sequence number, payload length, flags (_LAST, _BIG)
_LAST = 1  # the frame ends its text
_BIG = 2  # the text is `_FAST_ABOVE` characters or more: worth loading fastokens for
_FRAME = 256 * 1024  # characters per frame: what the proxy encodes at once and the helper holds
_WRITE = 1 << 20  # bytes of frames gathered before one write to the pipe
_MEMO = 64  # full spans whose counts the helper remembers (a run of one letter is one span, repeated)
_QUEUED_SPANS = 64  # spans cut and waiting for a counting thread in the helper
_MAX_PENDING = 4 * 1024 * 1024  # characters queued: over this the counter sends at once (no idle wait)
_EAGER = 2 * 1024 * 1024  # characters: a text this big is counted at once (the exit must not wait for it)
_IDLE = 0.05  # seconds without calls in the pipeline before smaller texts are counted
_SPAWN_IDLE = 0.5  # seconds without calls before the helper is started (unless needed sooner)
_HELPER_WORKERS = 2  # threads counting spans in the helper (tiktoken and fastokens release the GIL)
_FAST_ABOVE = 16 * 1024 * 1024  # characters: worth loading fastokens for (its load takes seconds and memory)
_FAST_ENV = "MCPSQUEEZE_FASTOKENS"  # how the `fastokens` setting reaches the helper
_HELPER_DATA_CAP = 512 * 1024 * 1024  # RLIMIT_DATA: room for tiktoken and fastokens, not for a runaway
_PR_SET_PDEATHSIG = 1
_HELPER_MAIN = "from mcpsqueeze.accounting._counter import main; main()"
_PARENT_ENV = "MCPSQUEEZE_COUNTER_PARENT"  # the proxy's pid: the helper ends if it is not its parent
# glibc gives big freed buffers back (a fixed mmap threshold, two arenas): the helper's memory stays near
# what it holds.
_MALLOC_ENV = {"MALLOC_MMAP_THRESHOLD_": str(128 * 1024), "MALLOC_ARENA_MAX": "2"}


def _helper_env(fastokens: bool) -> dict[str, str]:
    """Our environment, with this package importable however the proxy itself found it, and the
    `fastokens` setting passed on."""
    root = str(Path(__file__).resolve().parents[2])
    path = os.environ.get("PYTHONPATH")
    env = {**os.environ, **_MALLOC_ENV, "PYTHONPATH": root + (os.pathsep + path if path else "")}
    env[_PARENT_ENV] = str(os.getpid())
    env.pop(_FAST_ENV, None)
    if fastokens:
        env[_FAST_ENV] = "1"
    return env


class TokenCounter:
    """Counts texts in a helper process; every `count` gets a Future with the exact o200k count."""

    def __init__(self, max_pending: int = _MAX_PENDING, fastokens: bool = False) -> None:
        self.max_pending = max_pending
        self.fastokens = fastokens  # the helper may load fastokens for huge texts (the `fastokens` setting)
        self._cond = threading.Condition()
        self._queue: deque[tuple[int, str, concurrent.futures.Future[int]]] = deque()
        # Sent to the helper, not yet counted: the text stays here so a dead helper loses no figure.
        self._waiting: dict[int, tuple[str, concurrent.futures.Future[int]]] = {}
        self._pending_bytes = 0
        self._settling = 0  # futures being resolved right now (their callbacks running)
        # While calls are answered small texts wait (the helper would take the CPU the relay and the
        # backend need): until `_IDLE` without calls, a half-full queue, a big text, or `drain`.
        self._active = 0
        self._last_active = 0.0
        self._eager_queued = 0
        self._draining = False
        self._seq = 0
        self._closed = False
        self._proc: subprocess.Popen[bytes] | None = None
        self._writer: threading.Thread | None = None
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
            self._start_writer()
            # Wake the writer only when it must act on this text (it looks again on its own within
            # `_IDLE` while texts wait): a wake-up per call costs the relay a thread switch per answer.
            if len(self._queue) == 1 or len(text) >= _EAGER or self._pending_bytes * 2 >= self.max_pending:
                self._cond.notify_all()
        return future

    def start(self) -> None:
        """Start the writer thread now rather than on the first text."""
        with self._cond:
            if not self._closed:
                self._start_writer()

    def _start_writer(self) -> None:
        if self._writer is None:  # (under self._cond)
            self._writer = threading.Thread(target=self._write_loop, name="mcpsqueeze-count", daemon=True)
            self._writer.start()

    @property
    def pending_bytes(self) -> int:
        return self._pending_bytes

    def busy(self, delta: int) -> None:
        """+1 when a call enters the pipeline, -1 when it leaves: small texts wait while calls run."""
        with self._cond:
            self._active += delta
            self._last_active = time.monotonic()

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
            return min(idle, _IDLE)  # looked at again soon: nobody wakes the writer when calls end
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
                # Not `-m`: the package imports this module, and runpy would load it a second time.
                [sys.executable, "-c", _HELPER_MAIN],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=None,
                env=_helper_env(self.fastokens),
                close_fds=True,
                start_new_session=True,  # the agent's Ctrl-C goes to the proxy, which closes us in order
            )
        except OSError as exc:
            logger.warning("mcpsqueeze: token counter helper did not start (%s); counting in-process", exc)
            self._helper_failed = True
            return None
        self._proc = proc
        threading.Thread(target=self._read_loop, args=(proc,), name="mcpsqueeze-counted", daemon=True).start()
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
                    # Before the helper runs, wait for a longer lull: its start takes a core for a
                    # while, from this proxy's calls and from the agent's other servers.
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
        """`text` in frames of `_FRAME` characters: never a second copy of a whole result here."""
        assert proc.stdin is not None
        big = _BIG if len(text) >= _FAST_ABOVE else 0
        pending: list[bytes] = []
        gathered = 0
        for start in range(0, len(text), _FRAME):
            data = text[start : start + _FRAME].encode("utf-8", "surrogatepass")
            last = _LAST if start + _FRAME >= len(text) else 0
            pending += (_HEADER.pack(seq, len(data), big | last), data)
            gathered += len(data)
            if gathered >= _WRITE or last:
                proc.stdin.write(b"".join(pending))
                pending.clear()
                gathered = 0
        proc.stdin.flush()

    def _helper_lost(self) -> None:
        """The helper died: count what it held here (exact figures, just slower)."""
        if self._closed:
            return
        with self._cond:
            if self._helper_failed:
                return
            self._helper_failed = True
            lost = list(self._waiting)
        logger.warning("mcpsqueeze: the token counter helper stopped; counting in-process")
        for seq in lost:
            self._count_here(seq)

    def _count_here(self, seq: int) -> None:
        from ._tokens import count_tokens

        with self._cond:
            entry = self._waiting.get(seq)
        if entry is None:
            return
        value: int | BaseException
        try:
            value = count_tokens(entry[0])
        except (KeyboardInterrupt, SystemExit):
            raise
        except BaseException as exc:  # accounting never takes the proxy down; tiktoken panics too
            value = exc
        self._settle(seq, value)

    def _settle(self, seq: int, value: int | BaseException) -> None:
        with self._cond:
            entry = self._waiting.pop(seq, None)
            if entry is None:
                return  # settled already (the helper answered as it died)
            self._settling += 1
        text, future = entry
        try:  # the future's callbacks (the stats line, the totals) run here, before `drain` can return
            if isinstance(value, BaseException):
                future.set_exception(value)
            else:
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
                self._settle(seq, value)
        self._helper_lost()


# -- the helper process ------------------------------------------------------------------------------------


def _read_exact(stream: IO[bytes], size: int) -> bytes | None:
    """`size` bytes, or None at the end of input (a buffered stream reads until it has them all)."""
    data = stream.read(size)
    return data if len(data) == size else None


def _tiktoken_counter() -> Callable[[str], int]:
    """tiktoken's exact count, with only what counting needs kept loaded."""
    import gc

    from ._tokens import encoding

    enc = encoding()
    # Counting needs only the Rust core, not its Python copy of the 200k ranks.
    enc._mergeable_ranks = {}
    gc.collect()
    encode_ordinary = enc.encode_ordinary
    to_buffer = getattr(enc._core_bpe, "encode_to_tiktoken_buffer", None)

    def tokens_in(text: str) -> int:
        """`len(encode_ordinary(text))` without building a Python int per token: the core's `encode`
        with no special token allowed splits and merges exactly as `encode_ordinary` does. Lone
        surrogates go through `encode_ordinary`, which replaces them as tiktoken does."""
        if to_buffer is None:
            return len(encode_ordinary(text))
        try:
            view = memoryview(to_buffer(text, set()))
        except UnicodeEncodeError:
            return len(encode_ordinary(text))
        return view.nbytes // view.itemsize

    return tokens_in


class _Text:
    """One text arriving in frames: the unsplit tail, the sum so far, and spans still being counted."""

    __slots__ = ("big", "carry", "ended", "failed", "outstanding", "total")

    def __init__(self, big: bool) -> None:
        self.big, self.carry, self.ended, self.failed = big, "", False, False
        self.outstanding = self.total = 0


def _serve(stdin: IO[bytes], stdout: IO[bytes], wait: bool = True) -> None:
    """Count the framed texts on `stdin`, writing `seq count` lines (`-1`: could not count it). Texts come in
    frames of up to `_FRAME` characters and are cut into spans as they come: the helper holds a frame, a
    carried tail and a bounded queue of spans, never a whole text. The counts of the last `_MEMO` full
    spans are kept (a run of one letter is one span over and over). With `wait` False, end of input ends
    at once."""
    from ._fastcount import FastCounter

    # tiktoken loads while the first text comes in; if that one is big, fastokens starts loading too.
    loader = concurrent.futures.ThreadPoolExecutor(max_workers=1)
    tiktoken_counter = loader.submit(_tiktoken_counter)
    loader.shutdown(wait=False)
    fast = FastCounter()
    texts: dict[int, _Text] = {}
    fast_allowed = os.environ.get(_FAST_ENV) == "1"
    memo: dict[str, int] = {}  # full spans' counts, oldest first (under `lock`)
    lock = threading.Lock()
    spans_queue: queue.Queue[tuple[int, _Text, str] | None] = queue.Queue(maxsize=_QUEUED_SPANS)

    def finish(seq: int, state: _Text) -> None:
        """Called with `lock` held, once the text has ended and every span is counted."""
        texts.pop(seq, None)
        try:
            stdout.write(b"%d %d\n" % (seq, -1 if state.failed else state.total))
            stdout.flush()
        except (BrokenPipeError, ValueError):  # the proxy is gone: nobody waits for anything
            os._exit(0)
        finally:
            if state.big:
                fast.release()

    def work() -> None:
        while (item := spans_queue.get()) is not None:
            seq, state, span = item
            value = -1
            try:
                counter = None
                while state.big and counter is None and not fast.failed:
                    counter = fast.wait(0.05)  # counting beside its load would starve the load of the GIL
                with lock:
                    value = memo.get(span, -1)
                if value < 0:
                    try:
                        value = (counter or tiktoken_counter.result())(span)
                    except Exception:
                        if counter is None:
                            raise
                        value = tiktoken_counter.result()(span)  # fastokens refuses lone surrogates
                    if len(span) == SPAN:
                        with lock:
                            memo[span] = value
                            if len(memo) > _MEMO:
                                del memo[next(iter(memo))]
            except BaseException:  # tiktoken's panics too: the proxy then counts it (or reports the error)
                value = -1
            with lock:
                if value < 0:
                    state.failed = True
                else:
                    state.total += value
                state.outstanding -= 1
                if state.ended and not state.outstanding:
                    finish(seq, state)

    workers = [threading.Thread(target=work, daemon=True) for _ in range(_HELPER_WORKERS)]
    for worker in workers:
        worker.start()
    while True:
        header = _read_exact(stdin, _HEADER.size)
        if header is None:
            break
        seq, size, flags = _HEADER.unpack(header)
        state = texts.get(seq)
        if state is None:
            state = texts[seq] = _Text(bool(flags & _BIG) and fast_allowed)
            if state.big:  # start loading fastokens now, while the text itself is still coming through
                fast.acquire()
        data = _read_exact(stdin, size)
        if data is None:
            break
        last = bool(flags & _LAST)
        text = state.carry + data.decode("utf-8", "surrogatepass")
        del data
        start = 0
        while len(text) - start > SPAN or (last and start < len(text)):
            end, _ = next_cut(text, start)
            with lock:
                state.outstanding += 1
            spans_queue.put((seq, state, text[start:end]))
            start = end
        state.carry = text[start:]
        del text
        if last:
            with lock:
                state.ended = True
                if not state.outstanding:
                    finish(seq, state)
    if not wait:
        return
    for _ in workers:
        spans_queue.put(None)
    for worker in workers:
        worker.join()


def _die_with_parent(parent: int) -> None:
    """Linux: be killed when the proxy dies, even by SIGKILL (PR_SET_PDEATHSIG); end now if it already
    has. Elsewhere the end of input ends the helper (`main`)."""
    with contextlib.suppress(OSError, AttributeError):
        import ctypes
        import signal

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
    if parent and os.getppid() != parent:  # it died before the prctl: nobody is there to answer
        os._exit(0)


def _cap_memory() -> None:
    """A hard cap on the helper's data (RLIMIT_DATA: heap and private writable mappings): counting in
    bounded spans keeps it far below; past it an allocation fails, the helper dies, and the proxy counts
    what it held itself (in spans too). Never raises the cap someone set lower."""
    with contextlib.suppress(ImportError, OSError, ValueError, AttributeError):
        import resource

        soft, hard = resource.getrlimit(resource.RLIMIT_DATA)
        cap = _HELPER_DATA_CAP
        if hard != resource.RLIM_INFINITY:
            cap = min(cap, hard)
        if soft == resource.RLIM_INFINITY or soft > cap:
            resource.setrlimit(resource.RLIMIT_DATA, (cap, hard))


def main() -> None:
    # Not niced: a niced helper starves on a busy machine, and the exit waits for its figures.
    _die_with_parent(int(os.environ.get(_PARENT_ENV, "0") or 0))
    _cap_memory()
    with contextlib.suppress(KeyboardInterrupt, BrokenPipeError):
        _serve(sys.stdin.buffer, sys.stdout.buffer, wait=False)
    with contextlib.suppress(OSError):
        sys.stdout.flush()
    os._exit(0)  # every answer is written: skip freeing the vocabulary's 200k objects (~0.5 s)
