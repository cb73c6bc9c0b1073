"""Originals on disk, in a private directory, written crash-safe and no-follow: tmp, write, close, rename
before the preview is returned, so a reader sees the whole original or no file, and a failed write is known
before the preview. The fsync runs off the response path (``_sync``). An original identical to one stored
before is an alias record naming that one's file.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import threading
from collections import OrderedDict
from pathlib import Path

from mcpsqueeze._errors import RecoveryError

from ._ids import alias_record, final_name, require_response_id, tmp_name
from ._port import DEFAULT, Space
from ._scoped import DIR_FLAGS, open_directory, read_member
from ._sync import SYNC_DELAY, Syncer

__all__ = [
    "FileStore",
    "check_if_present",
    "check_private_dir",
    "ensure_private_dir",
    "make_private",
    "open_private_dir",
    "readable_by_others",
]

_DIGESTS = 4096  # how many distinct stored originals the store remembers for content addressing
_TMP_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC

_CAUSES = {
    errno.ENOSPC: "the disk is full",
    errno.EDQUOT: "the disk quota is exceeded",
    errno.EROFS: "the file system is read-only",
    errno.EACCES: "permission denied",
    errno.EPERM: "operation not permitted",
    errno.EEXIST: "a file with the temporary name already exists",
    errno.ELOOP: "a symlink sits at the temporary name",
}


def _cause(exc: OSError) -> str:
    known = _CAUSES.get(exc.errno or 0)
    detail = exc.strerror or str(exc)
    return f"{known} ({detail})" if known else detail


def check_private_dir(st: os.stat_result, path: Path, what: str = "recovery directory") -> None:
    """Refuse a directory another user could plant files in or swap out; ``what`` names it in messages."""
    if stat.S_ISLNK(st.st_mode):
        raise RecoveryError(
            f"The {what} {path} is a symlink; refusing to follow it. "
            "Point mcpsqueeze at the real directory, or remove the link."
        )
    if not stat.S_ISDIR(st.st_mode):
        raise RecoveryError(f"The {what} {path} is not a directory; remove it or choose another {what}.")
    uid = os.geteuid()
    if st.st_uid != uid:
        raise RecoveryError(
            f"The {what} {path} is owned by uid {st.st_uid}, not by you (uid {uid}); "
            f"choose a {what} of your own."
        )
    if st.st_mode & 0o022:
        raise RecoveryError(
            f"The {what} {path} is writable by group or others "
            f"(mode {stat.S_IMODE(st.st_mode):04o}); run `chmod 700 {path}` or choose another directory."
        )


def readable_by_others(
    path: Path, what: str = "recovery directory", exposes: str = "read every original kept there"
) -> str | None:
    """A warning when a usable directory is still group/world-readable (or -searchable), else None: writable
    by others is refused (``check_private_dir``), readable only leaks, and a directory the user chose may
    be meant to be shared."""
    try:
        mode = stat.S_IMODE(os.stat(path).st_mode)
    except OSError:
        return None
    if not mode & 0o077:
        return None
    return (
        f"the {what} {path} can be read by group or others (mode {mode:04o}), so they can {exposes}; "
        f"run `chmod 700 {path}` to make it private."
    )


def ensure_private_dir(path: Path, what: str = "recovery directory") -> Path:
    """Create (0700) or check a private directory (``what``: its name in messages); its resolved path."""
    path = Path(os.path.abspath(path))
    if not check_if_present(path, what):
        _create(path, what)
        check_private_dir(os.lstat(path), path, what)
    return Path(os.path.realpath(path))


def check_if_present(path: Path, what: str) -> bool:
    """Refuse an existing unsafe directory before anything is created; False when there is none (it is
    made later)."""
    path = Path(os.path.abspath(path))
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return False
    except OSError as exc:
        raise RecoveryError(f"Cannot inspect the {what} {path}: {_cause(exc)}.") from exc
    check_private_dir(st, path, what)
    return True


def _create(path: Path, what: str) -> None:
    """`path` made 0700, and each missing parent too: a parent made with the umask's 0755 would be
    the default socket and token directory of `serve` (``<cache>/mcpsqueeze``, beside ``recovery``)."""
    missing = []
    step = path
    while not os.path.lexists(step) and step.parent != step:
        missing.append(step)
        step = step.parent
    for directory in reversed(missing):
        try:
            os.mkdir(directory, 0o700)
        except FileExistsError:
            continue  # Someone else made it meanwhile; the caller checks whatever is there now.
        except OSError as exc:
            raise RecoveryError(
                f"Cannot create the {what} {path}: {_cause(exc)}. Choose a writable location."
            ) from exc
        # The umask may have narrowed 0700 (e.g. 0500); we just made it, so set exactly 0700.
        fd = os.open(directory, DIR_FLAGS)
        try:
            os.fchmod(fd, 0o700)
        finally:
            os.close(fd)


def make_private(path: Path, what: str) -> str | None:
    """Our own default directory (`serve`'s socket and token): created 0700, or set to 0700 when found
    looser (it is ours, and holds the socket or the token); a note when changed."""
    path = ensure_private_dir(path, what=what)
    mode = stat.S_IMODE(os.stat(path).st_mode)
    if not mode & 0o077:
        return None
    os.chmod(path, 0o700)
    return f"the {what} {path} was mode {mode:04o}; it is now 0700, as it holds the session's socket or token"


def open_private_dir(path: Path) -> int:
    """Open the directory no-follow and re-check it, so a later swap cannot redirect our writes."""
    fd = open_directory(path)
    try:
        check_private_dir(os.fstat(fd), path)
    except BaseException:
        os.close(fd)
        raise
    return fd


class FileStore:
    """Originals as ``<directory>/mcpsqueeze-<id>.json``; the directory is re-opened (no-follow) and
    re-checked for every operation, so one removed by a tmp cleaner is recreated, never written into."""

    def __init__(self, directory: Path, sync_delay: float | None = SYNC_DELAY) -> None:
        """``sync_delay``: seconds within which a written file is fsynced in the background (and at
        exit); None fsyncs each file and the directory before `write` returns."""
        self.directory = ensure_private_dir(directory)
        self._syncer = (
            Syncer(lambda: open_private_dir(self.directory), sync_delay) if sync_delay is not None else None
        )
        # content key (tenant + digest) -> the id whose file holds those bytes in full
        self._earlier: OrderedDict[str, str] = OrderedDict()
        self._lock = threading.Lock()

    def path_for(self, response_id: str) -> Path:
        """Where the original of ``response_id`` is (or would be) stored."""
        require_response_id(response_id, ValueError)
        return self.directory / final_name(response_id)

    def put(
        self, response_id: str, original: bytes, *, space: Space = DEFAULT, digest: str = ""
    ) -> str | None:
        """Store an original completely, or raise RecoveryError and leave no final file; the path of the
        file that holds its bytes. One identical to an original this space stored before (the same
        `digest`, its sha256) is an alias record of that one, unless that one is gone."""
        key = space.content_key(digest) if digest else ""
        with self._lock:
            earlier = self._earlier.get(key)
        if earlier is not None:
            with contextlib.suppress(RecoveryError):  # gone (retention, a cleaner): store this one in full
                return self.alias(response_id, earlier, space=space)
        where = self._write(space.local(response_id), original)
        if key:
            with self._lock:
                self._earlier[key] = response_id
                self._earlier.move_to_end(key)
                while len(self._earlier) > _DIGESTS:
                    self._earlier.popitem(last=False)
        return where

    def _write(self, response_id: str, original: bytes) -> str:
        """Write `original` as the file of `response_id` (crash-safe: tmp, write, close, rename)."""
        final = self.path_for(response_id)
        tmp = tmp_name(response_id)
        dir_fd = self._open_dir()
        try:
            try:
                fd = os.open(tmp, _TMP_FLAGS, 0o600, dir_fd=dir_fd)
            except OSError as exc:
                # Not ours (O_EXCL/O_NOFOLLOW said so): leave it alone.
                raise self._failed(response_id, exc) from exc
            later = -1  # a second descriptor of the file, kept for the background fsync
            try:
                try:
                    os.fchmod(fd, 0o600)
                    view = memoryview(original)
                    while view:  # ENOSPC, EDQUOT, EIO surface here (or at close), before any preview
                        view = view[os.write(fd, view) :]
                    if self._syncer is not None:
                        with contextlib.suppress(OSError):  # out of descriptors: sync it here instead
                            later = os.dup(fd)
                    if later < 0:
                        os.fsync(fd)
                finally:
                    os.close(fd)  # some file systems (NFS) report write errors only at close
                os.rename(tmp, final.name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
            except OSError as exc:
                if later >= 0:
                    os.close(later)
                _unlink_quietly(tmp, dir_fd)
                raise self._failed(response_id, exc) from exc
            if later < 0:
                _fsync_dir(dir_fd, final.name)
            else:
                assert self._syncer is not None
                self._syncer.add(later, final.name)
        finally:
            os.close(dir_fd)
        return str(final)

    def alias(self, response_id: str, target_id: str, *, space: Space = DEFAULT) -> str | None:
        """Make ``response_id`` stand for the original already stored under ``target_id`` (its mtime refreshed
        first, so retention never removes it before its alias); the target's path. RecoveryError when the
        target is gone or odd."""
        response_id, target_id = space.local(response_id), space.local(target_id)
        target = self.path_for(target_id)
        dir_fd = self._open_dir()
        try:
            try:
                st = os.stat(target.name, dir_fd=dir_fd, follow_symlinks=False)
                if not stat.S_ISREG(st.st_mode) or st.st_uid != os.geteuid() or st.st_nlink != 1:
                    raise RecoveryError(f"{target} is not a plain recovery file of ours")
                os.utime(target.name, dir_fd=dir_fd, follow_symlinks=False)
            except OSError as exc:
                raise self._failed(response_id, exc) from exc
        finally:
            os.close(dir_fd)
        self._write(response_id, alias_record(target_id))
        return str(target)

    def get(self, response_id: str, *, space: Space = DEFAULT) -> bytes:
        """Return a stored original; RecoveryError when there is none."""
        require_response_id(response_id)
        response_id = space.local(response_id)
        dir_fd = self._open_dir()
        try:
            return read_member(dir_fd, final_name(response_id), self.directory, response_id)
        finally:
            os.close(dir_fd)

    def _open_dir(self) -> int:
        if not os.path.lexists(self.directory):
            ensure_private_dir(self.directory)
        return open_private_dir(self.directory)

    def _failed(self, response_id: str, exc: OSError) -> RecoveryError:
        return RecoveryError(
            f"Could not store the original of response {response_id} in {self.directory}: {_cause(exc)}. "
            "Free some space, fix the directory's permissions, or choose another recovery directory."
        )


def _unlink_quietly(name: str, dir_fd: int) -> None:
    # Already gone, or the same failure again: clean removes stale tmp files later.
    with contextlib.suppress(OSError):
        os.unlink(name, dir_fd=dir_fd)


def _fsync_dir(dir_fd: int, name: str) -> None:
    """Make the rename durable; undo it if that fails so no unsynced file is reported stored."""
    try:
        os.fsync(dir_fd)
    except OSError as exc:
        if exc.errno in (errno.EINVAL, errno.ENOTSUP):
            return  # The file system cannot sync directories; the rename is as durable as it gets.
        _unlink_quietly(name, dir_fd)
        raise RecoveryError(f"Could not make the recovery file {name} durable: {_cause(exc)}.") from exc
