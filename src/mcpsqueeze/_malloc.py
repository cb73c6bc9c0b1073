"""glibc's allocator, told to give big freed buffers back: a proxy's RSS must not grow with each result.

Results are big strings and bytes (hundreds of KB each), allocated in several threads. By default glibc
raises its mmap threshold after each such buffer is freed (up to 32 MB), so later ones come from heap
arenas that fragment and rarely shrink; with one arena per thread, RSS climbs far above what is live.
A fixed threshold (which turns the raising off) and two arenas keep RSS close to the live data.
Elsewhere (musl, macOS) this does nothing.
"""

from __future__ import annotations

import contextlib

__all__ = ["ENV", "tame_malloc"]

_M_MMAP_THRESHOLD = -3
_M_ARENA_MAX = -8
_THRESHOLD = 128 * 1024
_ARENAS = 2
ENV = {"MALLOC_MMAP_THRESHOLD_": str(_THRESHOLD), "MALLOC_ARENA_MAX": str(_ARENAS)}  # for child processes


def tame_malloc() -> None:
    with contextlib.suppress(OSError, AttributeError):
        import ctypes

        libc = ctypes.CDLL("libc.so.6")
        libc.mallopt(_M_MMAP_THRESHOLD, _THRESHOLD)
        libc.mallopt(_M_ARENA_MAX, _ARENAS)
