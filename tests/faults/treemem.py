"""The resident memory of a process and all its descendants, read from /proc, and a sampler that keeps
its peak (Linux only): what `ps` would add up, sampled every few ms in a thread."""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path

__all__ = ["PeakSampler", "cmdline", "descendants", "tree_rss"]


def descendants(pid: int) -> list[int]:
    """`pid` and every live process below it (children of every thread)."""
    found, todo = [], [pid]
    while todo:
        current = todo.pop()
        found.append(current)
        try:
            tasks = list(Path(f"/proc/{current}/task").iterdir())
        except (FileNotFoundError, ProcessLookupError):
            continue
        for task in tasks:
            with contextlib.suppress(FileNotFoundError, ProcessLookupError):
                todo += [int(c) for c in (task / "children").read_text().split()]
    return found


def cmdline(pid: int) -> bytes:
    """The command line of a process (empty once gone)."""
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except (FileNotFoundError, ProcessLookupError):
        return b""


def rss(pid: int) -> int:
    """Resident bytes of one process (0 once gone)."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    except (FileNotFoundError, ProcessLookupError):
        pass
    return 0


def tree_rss(pid: int) -> int:
    return sum(rss(p) for p in descendants(pid))


class PeakSampler:
    """Samples `tree_rss(pid)` until stopped; `peak` is the largest sum seen."""

    def __init__(
        self,
        pid: int,
        every: float = 0.005,
        limit: int | None = None,
        over: Callable[[int], None] | None = None,
        tree: bool = True,
        measure: Callable[[int], int] | None = None,
    ) -> None:
        """With `limit`, `over(rss)` is called (once) when the tree passes it: a test stops the tree there.
        With `tree` False, only `pid` itself is sampled; `measure` samples something else of it (a count
        of processes)."""
        self.pid, self.every, self.peak, self.limit, self.over = pid, every, 0, limit, over
        self.measure = measure or (tree_rss if tree else rss)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> PeakSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        while not self._stop.is_set():
            now = self.measure(self.pid)
            self.peak = max(self.peak, now)
            if self.limit is not None and now > self.limit and self.over is not None:
                self.over(now)
                self.over = None
            time.sleep(self.every)


if __name__ == "__main__":
    import sys

    print(tree_rss(int(sys.argv[1])) / 1e6, "MB", descendants(int(sys.argv[1])), os.getpid())
