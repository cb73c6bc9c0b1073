"""The mount-scoped reader behind ``mcpsq recover ID|PATH`` (stdlib only: the shim imports it): it reads a
regular file of ours directly inside the recovery directory, named like a recovery file, and refuses
anything else rather than following it.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from mcpsqueeze._errors import RecoveryError, RefusedPathError

from ._ids import FINAL_NAME_RE, alias_target, final_name, is_response_id

__all__ = ["DIR_FLAGS", "open_directory", "open_recovery_file", "read_member"]

DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
# O_NONBLOCK: opening a FIFO must not hang; O_NOCTTY: a terminal must not become ours.
_FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC
_CHUNK = 1 << 20


def _refuse(ref: str, directory: Path, why: str) -> RefusedPathError:
    return RefusedPathError(
        f"Refused to read {ref!r}: {why}. Only recovery files (mcpsqueeze-<response id>.json) directly "
        f"inside {directory} can be read; pass the response id from the truncation record instead."
    )


def open_directory(directory: Path) -> int:
    """Open the directory without following a symlink (the one no-follow opener; the stores add the privacy
    check: ``_files.open_private_dir``)."""
    try:
        return os.open(directory, DIR_FLAGS)
    except FileNotFoundError:
        raise RecoveryError(
            f"The recovery directory {directory} does not exist; nothing has been stored there yet, "
            "or it was removed. Check the recovery directory setting."
        ) from None
    except OSError as exc:
        if os.path.islink(directory):
            raise RefusedPathError(
                f"The recovery directory {directory} is a symlink; refusing to follow it. "
                "Point mcpsqueeze at the real directory."
            ) from exc
        raise RecoveryError(f"Cannot open the recovery directory {directory}: {exc.strerror}.") from exc


def read_member(dir_fd: int, name: str, directory: Path, ref: str, *, follow_alias: bool = True) -> bytes:
    """Read one recovery file by name in an open directory, refusing anything odd: lstat before the open (no
    device is even opened), fstat after it (the very inode checked); an alias record is followed one step,
    in the same directory."""
    if not FINAL_NAME_RE.match(name):
        raise _refuse(ref, directory, f"the name {name!r} is not a recovery file name")
    try:
        before = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        raise RecoveryError(
            f"There is no recovery file {name} in {directory}. It may have been removed by retention "
            "cleanup, or the original was never stored to a file; call the tool again to get it."
        ) from None
    _check_member(before, ref, directory)
    try:
        fd = os.open(name, _FILE_FLAGS, dir_fd=dir_fd)
    except OSError as exc:
        raise _refuse(ref, directory, f"it cannot be opened safely ({exc.strerror})") from exc
    try:
        after = os.fstat(fd)
        if (after.st_dev, after.st_ino) != (before.st_dev, before.st_ino):
            raise _refuse(ref, directory, "it was replaced while being opened")
        _check_member(after, ref, directory)
        chunks: list[bytes] = []
        while chunk := os.read(fd, _CHUNK):
            chunks.append(chunk)
    finally:
        os.close(fd)
    data = b"".join(chunks)
    target = alias_target(data)
    if target is None:
        return data
    if not follow_alias:
        raise _refuse(ref, directory, "it is an alias of an alias (aliases are never chained)")
    return read_member(dir_fd, final_name(target), directory, ref, follow_alias=False)


def _check_member(st: os.stat_result, ref: str, directory: Path) -> None:
    if stat.S_ISLNK(st.st_mode):
        raise _refuse(ref, directory, "it is a symlink")
    if not stat.S_ISREG(st.st_mode):
        raise _refuse(ref, directory, "it is not a regular file")
    if st.st_uid != os.geteuid():
        raise _refuse(ref, directory, f"it is owned by uid {st.st_uid}, not by you (uid {os.geteuid()})")
    if st.st_nlink != 1:
        # Ours are always written fresh and renamed; a hard link could alias any file of the user.
        raise _refuse(ref, directory, "it has other hard links")


def _name_for(directory: Path, ref: str) -> str:
    """Turn an id, bare name or path into a name directly inside ``directory``, or refuse."""
    if is_response_id(ref):
        return final_name(ref)
    if not ref or "\0" in ref:
        raise _refuse(ref, directory, "it is empty or contains a NUL byte")
    path = Path(ref)
    if ".." in path.parts:
        raise _refuse(ref, directory, "it contains '..'")
    if len(path.parts) == 1 and os.sep not in ref:
        return ref
    absolute = Path(os.path.abspath(path))
    # Compared as spelled, not resolved: a parent that only *resolves* to the directory passes
    # through a symlink (a link to the directory, or a loop inside it), and that is refused.
    if str(absolute.parent) not in (str(directory), os.path.realpath(directory)):
        raise _refuse(ref, directory, f"it is in {absolute.parent}, not directly in the recovery directory")
    return absolute.name


def open_recovery_file(directory: Path, ref: str) -> bytes:
    """The bytes of the recovery file a response id, bare name or path names: RefusedPathError for anything
    not one of our files directly inside ``directory``, RecoveryError when it names no file."""
    directory = Path(os.path.abspath(directory))
    name = _name_for(directory, ref)
    dir_fd = open_directory(directory)
    try:
        return read_member(dir_fd, name, directory, ref)
    finally:
        os.close(dir_fd)
