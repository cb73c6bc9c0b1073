"""Files mcpsqueeze writes for the user into a directory the user names (`install-commands`' entry points,
Code Mode modules): never over a file that is not ours, and each one replaced whole or not at all."""

from __future__ import annotations

import os
import stat
from collections.abc import Sequence
from pathlib import Path

from ._errors import UsageError

__all__ = ["write_ours"]


def _is_ours(path: Path, markers: tuple[str, ...]) -> bool:
    """Nothing there, or a regular file of this user with one of ``markers`` among its first three lines."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return True
    if not stat.S_ISREG(info.st_mode) or info.st_uid != os.geteuid():
        return False
    with open(path, "rb") as handle:
        head = handle.read(4096).splitlines()[:3]
    return any(marker.encode() in head for marker in markers)


def write_ours(
    files: Sequence[tuple[Path, bytes | str]],
    mode: int,
    markers: tuple[str, ...],
    *,
    chmod: bool = False,
) -> list[Path]:
    """Write each ``(path, data)`` (text as UTF-8; created with ``mode``, and with ``chmod`` exactly ``mode``
    whatever the umask) through a temporary file beside it, renamed over the path; return the paths
    written.

    UsageError, and nothing written, when a path holds a file without one of our ``markers`` lines."""
    foreign = [str(path) for path, _ in files if not _is_ours(path, markers)]
    if foreign:
        raise UsageError(
            f"Refusing to overwrite {', '.join(foreign)}: not written by mcpsqueeze install-commands. "
            "Remove them or choose another directory."
        )
    written: list[Path] = []
    for target, data in files:
        tmp = target.with_name(f".{target.name}.mcpsqueeze-tmp-{os.getpid()}")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, mode)
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(data if isinstance(data, bytes) else data.encode())
            if chmod:
                os.chmod(tmp, mode)
            os.replace(tmp, target)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
        written.append(target)
    return written
