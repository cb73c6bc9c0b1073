"""glibc's allocator, told to give big freed buffers back: a proxy's RSS must not grow with each result.

Results are big strings and bytes (hundreds of KB each), allocated in several threads. By default glibc
raises its mmap threshold after each such buffer is freed (up to 32 MB), so later ones come from heap
arenas that fragment and rarely shrink; with one arena per thread, RSS climbs far above what is live.
A fixed threshold (which turns the raising off) and two arenas keep RSS close to the live data.
Elsewhere (musl, macOS) this does nothing.

The proxy itself takes a higher fixed threshold (4 MiB) and keeps up to 4 MiB free at the heap's top:
each buffer over the threshold is a fresh mapping whose every page faults on first touch, and a
200 KB result makes about eight such buffers (the line, the parsers' working memory, orjson's output,
reserved at several times its length); on this kind of virtual machine that was ~1.2 ms of each call
(the line's parse alone went from 0.35 to 0.8 ms). Measured over 1,000 calls of 200 KB-1 MB
(`scripts/bench_session.py --only-memory`): the proxy's RSS 60-68 MB instead of 52-56 MB, flat.
Child processes (the token counter) keep the 128 KiB threshold (`ENV`).
"""

from __future__ import annotations

import contextlib

__all__ = ["ENV", "tame_malloc"]

_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3
_M_ARENA_MAX = -8
_THRESHOLD = 128 * 1024
_ARENAS = 2
_OWN_THRESHOLD = 4 * 1024 * 1024  # the proxy's own (see above)
_OWN_TRIM = 4 * 1024 * 1024
ENV = {"MALLOC_MMAP_THRESHOLD_": str(_THRESHOLD), "MALLOC_ARENA_MAX": str(_ARENAS)}  # for child processes


def tame_malloc() -> None:
    with contextlib.suppress(OSError, AttributeError):
        import ctypes

        libc = ctypes.CDLL("libc.so.6")
        libc.mallopt(_M_MMAP_THRESHOLD, _OWN_THRESHOLD)
        libc.mallopt(_M_TRIM_THRESHOLD, _OWN_TRIM)
        libc.mallopt(_M_ARENA_MAX, _ARENAS)
