"""fastokens' exact o200k counter, loaded by the counting helper only for texts big enough to pay for it
(it counts many times faster than tiktoken, but its load takes seconds and memory). The helper starts
loading it when such a text is announced, counts the first parts with tiktoken meanwhile, and drops it
after `_KEEP` idle seconds. Its figures agree with tiktoken's `encode_ordinary`; a part it refuses (lone
surrogates), or a missing or failing fastokens, is counted by tiktoken.
"""

from __future__ import annotations

import contextlib
import gc
import logging
import os
import tempfile
import threading
from collections.abc import Callable
from typing import Any

logger = logging.getLogger(__name__)

__all__ = ["FastCounter", "load_fastokens"]

_KEEP = 30.0  # seconds a loaded fastokens stays after the last big text


def load_fastokens() -> Callable[[str], int]:
    """fastokens' o200k `encode_ordinary` length, built from the vocabulary bytes we ship (never a download).

    Raises ImportError when fastokens is not installed."""
    import fastokens  # type: ignore[import-untyped, import-not-found, unused-ignore]

    from ._tokens import o200k_file

    data = o200k_file()
    # It loads from a path: an anonymous memory file where there is one, else a private temp file.
    if hasattr(os, "memfd_create"):
        fd = os.memfd_create("o200k_base.tiktoken", os.MFD_CLOEXEC)
        try:
            with open(fd, "wb", closefd=False) as out:
                out.write(data)
            tok = fastokens.Tokenizer.from_tiktoken(
                f"/proc/self/fd/{fd}", encoding="o200k_base", special_tokens={}
            )
        finally:
            os.close(fd)
    else:
        with tempfile.TemporaryDirectory(prefix="mcpsqueeze-o200k-") as tmp:
            path = os.path.join(tmp, "o200k_base.tiktoken")
            with open(path, "xb") as out:
                out.write(data)
            tok = fastokens.Tokenizer.from_tiktoken(path, encoding="o200k_base", special_tokens={})
    encode = tok.encode_ordinary

    def count(text: str) -> int:
        return len(encode(text))

    return count


class FastCounter:
    """fastokens on demand: `acquire` before a big text (starts the load once), `release` after it."""

    def __init__(self, loader: Callable[[], Callable[[str], int]] | None = None) -> None:
        self._loader = loader if loader is not None else load_fastokens
        self._lock = threading.Lock()
        self._ready = threading.Event()  # set when loaded or failed
        self._count: Callable[[str], int] | None = None
        self._loading = False
        self._failed = False
        self._users = 0
        self._timer: threading.Timer | None = None

    def acquire(self) -> None:
        with self._lock:
            self._users += 1
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
            if self._failed or self._loading or self._count is not None:
                return
            self._loading = True
            self._ready.clear()
        threading.Thread(target=self._load, name="mcpsqueeze-fastokens", daemon=True).start()

    def release(self) -> None:
        with self._lock:
            self._users -= 1
            if self._users or self._count is None:
                return
            self._timer = threading.Timer(_KEEP, self._drop)
            self._timer.daemon = True
            self._timer.start()

    def wait(self, timeout: float) -> Callable[[str], int] | None:
        """The count function once loaded (None if still loading after `timeout`, or failed)."""
        self._ready.wait(timeout)
        return self._count

    @property
    def failed(self) -> bool:
        return self._failed

    def _load(self) -> None:
        count: Callable[[str], int] | None = None
        try:
            count = self._loader()
        except ImportError:
            logger.debug("fastokens is not installed: big texts are counted with tiktoken")
        except Exception as exc:  # any failure of the optional counter: tiktoken counts, as without it
            logger.warning("mcpsqueeze: fastokens did not load (%s); counting big texts with tiktoken", exc)
        with self._lock:
            self._loading = False
            self._count = count
            self._failed = count is None
            idle = not self._users and count is not None
        self._ready.set()
        if idle:  # the text it was loaded for is counted already
            self.acquire()
            self.release()

    def _drop(self) -> None:
        with self._lock:
            if self._users or self._count is None:
                return
            self._count = None
            self._ready.clear()
        gc.collect()
        _trim()


def _trim() -> None:
    """Give the freed tables back to the system (glibc keeps freed heap otherwise)."""
    with contextlib.suppress(OSError, AttributeError):
        import ctypes

        libc: Any = ctypes.CDLL("libc.so.6")
        libc.malloc_trim(0)
