"""Recovery files made durable off the response path: fsync in a background thread, and at exit. A file is
complete and in place before its preview is returned (a crash of the proxy loses nothing); the fsync (1-25
ms a file on a busy disk) only adds surviving a power loss, so files and their directory are synced in
batches within ``delay`` seconds, and all pending at exit. Errors that mean "not stored" come from write(),
close() and rename(), still before the preview.
"""

from __future__ import annotations

import atexit
import contextlib
import errno
import logging
import os
import threading
import time
import weakref
from collections.abc import Callable

__all__ = ["SYNC_DELAY", "Syncer", "sync_all"]

logger = logging.getLogger(__name__)

SYNC_DELAY = 0.5  # seconds: how long a written file may wait for its fsync (batched with the others)
_MAX_PENDING = 256  # open descriptors waiting for a sync; past this, a write syncs the batch itself

_live: weakref.WeakSet[Syncer] = weakref.WeakSet()


class Syncer:
    """Pending fsyncs of one directory's files (dups of their descriptors) and of the directory (``open_dir``;
    it may be gone)."""

    def __init__(self, open_dir: Callable[[], int], delay: float = SYNC_DELAY) -> None:
        self._open_dir = open_dir
        self.delay = delay
        self._lock = threading.Lock()
        self._wake = threading.Condition(self._lock)
        self._pending: list[tuple[int, str]] = []  # (descriptor, file name for messages)
        self._syncing = threading.Lock()  # held while a batch is synced: `flush` waits for one in progress
        self._thread: threading.Thread | None = None
        _live.add(self)

    def add(self, fd: int, name: str) -> None:
        """Take ownership of ``fd`` (a written recovery file): it is fsynced and closed later."""
        with self._lock:
            self._pending.append((fd, name))
            full = len(self._pending) >= _MAX_PENDING
            if not full:
                if self._thread is None or not self._thread.is_alive():
                    self._thread = threading.Thread(target=self._run, name="mcpsqueeze-fsync", daemon=True)
                    self._thread.start()
                self._wake.notify()
        if full:  # the disk is slower than the results: sync here rather than hold more descriptors
            self.flush()

    def flush(self) -> None:
        """Sync every pending file and the directory now (at exit, or when the batch is full); a batch
        the background thread is syncing is finished first, so nothing is left half done at exit."""
        with self._syncing:
            with self._lock:
                batch, self._pending = self._pending, []
            if batch:
                self._sync(batch)

    def _run(self) -> None:
        while True:
            with self._lock:
                while not self._pending:
                    if not self._wake.wait(timeout=30.0):
                        self._thread = None  # idle: end; the next add starts a new thread
                        return
            time.sleep(self.delay)  # gather the files written meanwhile into one batch
            self.flush()

    def _sync(self, batch: list[tuple[int, str]]) -> None:
        failed: list[str] = []
        for fd, name in batch:
            try:
                os.fsync(fd)
            except OSError as exc:
                failed.append(f"{name} ({exc.strerror or exc})")
            finally:
                with contextlib.suppress(OSError):
                    os.close(fd)
        try:
            dir_fd = self._open_dir()
        except Exception:  # the directory is gone (a tmp cleaner): nothing left to make durable
            dir_fd = None
        if dir_fd is not None:
            try:
                os.fsync(dir_fd)
            except OSError as exc:
                if exc.errno not in (errno.EINVAL, errno.ENOTSUP):  # directories cannot be synced here
                    failed.append(f"the directory ({exc.strerror or exc})")
            finally:
                os.close(dir_fd)
        if failed:
            # The previews are out and the files are complete in the page cache (memory has them too):
            # they are readable now, they may just not survive a power loss.
            logger.warning(
                "mcpsqueeze: could not make %d recovery file(s) durable (fsync failed): %s",
                len(failed),
                "; ".join(failed[:3]),
            )


def sync_all() -> None:
    """Flush every store's pending syncs (registered to run at interpreter exit)."""
    for syncer in list(_live):
        with contextlib.suppress(Exception):
            syncer.flush()


atexit.register(sync_all)
