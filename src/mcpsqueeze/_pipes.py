"""1 MiB pipes for the big messages we pass between processes (the backend's answers, the texts the
token counter helper counts).

Through Linux's default 64 KiB pipe a 200 KB answer takes four rounds of the writer blocking and the
reader waking, and a 50 MB text ~800 writes, each needing the GIL back after it (a busy thread holds it
up to 5 ms); through 1 MiB, one and 50.
"""

from __future__ import annotations

import contextlib

__all__ = ["PIPE_SIZE", "widen"]

PIPE_SIZE = 1 << 20  # Linux's default pipe-max-size for unprivileged processes


def widen(fd: int) -> None:
    """Make the pipe behind `fd` PIPE_SIZE bytes; where that is refused or not Linux, it stays as it was."""
    with contextlib.suppress(AttributeError, OSError, ImportError):
        import fcntl

        fcntl.fcntl(fd, fcntl.F_SETPIPE_SZ, PIPE_SIZE)
