"""Files whose content we act on (a config naming commands, a token file, an OAuth client secret), read only
when no other user could have written them (the file, or its directory) and, for secrets, read them. One
check for all of them, the fix in its message. Stdlib only.
"""

from __future__ import annotations

import errno
import os
import stat

from ._errors import UsageError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["read_trusted"]

_READ = os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC  # O_NONBLOCK: a FIFO never hangs us
_LIMIT = 16 * 1024 * 1024  # bytes: no config or secret of ours comes close


def _owners() -> tuple[int, ...]:
    """Who may own a file we trust: us, and root (who could change anything of ours anyway)."""
    return (os.geteuid(), 0)


def check_trusted_dir(directory: str, what: str, file_uid: int) -> None:
    """Refuse a directory where another user could replace `what`: not ours (or root's), or writable by
    group or others, unless it is sticky (like /tmp) and the file in it (`file_uid`) is ours."""
    try:
        st = os.stat(directory)
    except OSError as exc:
        raise UsageError(f"cannot inspect the directory {directory} of the {what}: {exc.strerror}") from None
    sticky_and_ours = bool(st.st_mode & stat.S_ISVTX) and file_uid in _owners()
    if st.st_uid not in _owners():
        raise UsageError(
            f"the {what} is in {directory}, owned by uid {st.st_uid}, not by you (uid {os.geteuid()}) or "
            f"root; another user could replace it. Move it to a directory of your own."
        )
    if st.st_mode & 0o022 and not sticky_and_ours:
        raise UsageError(
            f"the {what} is in {directory}, which group or others can write (mode "
            f"{stat.S_IMODE(st.st_mode):04o}), so another user could replace it; run `chmod go-w "
            f"{directory}` or move it to a directory of your own."
        )


def read_trusted(path: Path | str, what: str, *, private: bool = False, follow: bool = True) -> bytes:
    """The bytes of `path` once no other user could have written it (UsageError otherwise). `private`: only
    its owner may read it. `follow`: a symlink is followed, both directories checked (else refused)."""
    spelled = os.path.abspath(os.fspath(path))
    flags = _READ if follow else _READ | os.O_NOFOLLOW
    try:
        fd = os.open(spelled, flags)
    except FileNotFoundError:
        raise
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise UsageError(f"the {what} {spelled} is a symlink; refusing to follow it") from None
        raise UsageError(f"cannot read the {what} {spelled}: {exc.strerror or exc}") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise UsageError(f"the {what} {spelled} is not a regular file")
        mode = stat.S_IMODE(info.st_mode)
        if info.st_uid not in _owners():
            raise UsageError(
                f"the {what} {spelled} is owned by uid {info.st_uid}, not by you (uid {os.geteuid()}) or "
                "root; another user could have written it. Use a copy of your own."
            )
        if mode & 0o022:
            raise UsageError(
                f"the {what} {spelled} can be written by group or others (mode {mode:04o}); run "
                f"`chmod go-w {spelled}`."
            )
        if private and mode & 0o077:
            raise UsageError(
                f"the {what} {spelled} can be read by group or others (mode {mode:04o}); run "
                f"`chmod 600 {spelled}`."
            )
        directories = dict.fromkeys([os.path.dirname(spelled), os.path.dirname(os.path.realpath(spelled))])
        for directory in directories:
            check_trusted_dir(directory, f"{what} {spelled}", info.st_uid)
        chunks: list[bytes] = []
        size = 0
        while chunk := os.read(fd, 1 << 20):
            size += len(chunk)
            if size > _LIMIT:
                raise UsageError(f"the {what} {spelled} is larger than {_LIMIT // (1024 * 1024)} MB")
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)
