"""File systems mounted for one test (a full disk, a read-only one), with the mount(2) system call itself
(no `mount` process), skipped where this machine cannot mount (CI runs as root and can; a skip there is a
failure)."""

from __future__ import annotations

import ctypes
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

MS_RDONLY = 1
MS_REMOUNT = 32
MNT_DETACH = 2
_libc = ctypes.CDLL(None, use_errno=True)


def _mount(target: Path, options: str, flags: int = 0) -> None:
    words = options.split(",")
    flags |= MS_RDONLY if "ro" in words else 0
    data = ",".join(w for w in words if w != "ro").encode()
    if _libc.mount(b"tmpfs", os.fsencode(target), b"tmpfs", flags, data) != 0:
        error = ctypes.get_errno()
        message = f"cannot mount a tmpfs ({options}) on {target}: {os.strerror(error)}"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)


def tmpfs(target: Path, options: str) -> Iterator[Path]:
    """A tmpfs mounted with `options` (`size=...`, `mode=...`, `ro`) on a new 0700 directory `target`;
    lazily unmounted after the test."""
    target.mkdir(mode=0o700)
    _mount(target, options)
    try:
        yield target
    finally:
        _libc.umount2(os.fsencode(target), MNT_DETACH)


def remount_read_only(target: Path) -> None:
    """The tmpfs at `target` made read-only while in use, as a file system gone read-only is."""
    _mount(target, "ro", MS_REMOUNT)
