"""File systems mounted for one test (a full disk, a read-only one, delayed allocation), skipped where this
machine cannot mount (CI runs as root and can; a skip there is a failure). A tmpfs is mounted with the
mount(2) system call itself; a file system image through a loop device, with `mount -o loop`."""

from __future__ import annotations

import ctypes
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

MS_RDONLY = 1
MS_REMOUNT = 32
MNT_DETACH = 2
_libc = ctypes.CDLL(None, use_errno=True)


def _refused(message: str) -> None:
    if os.environ.get("CI"):
        pytest.fail(message)
    pytest.skip(message)


def _mount(target: Path, options: str, flags: int = 0) -> None:
    words = options.split(",")
    flags |= MS_RDONLY if "ro" in words else 0
    data = ",".join(w for w in words if w != "ro").encode()
    if _libc.mount(b"tmpfs", os.fsencode(target), b"tmpfs", flags, data) != 0:
        _refused(f"cannot mount a tmpfs ({options}) on {target}: {os.strerror(ctypes.get_errno())}")


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


def mounted_image(target: Path, image: Path) -> Iterator[Path]:
    """The file system image `image` mounted through a loop device on a new 0700 directory `target`;
    lazily unmounted after the test."""
    target.mkdir(mode=0o700)
    done = subprocess.run(["mount", "-o", "loop", str(image), str(target)], capture_output=True, check=False)
    if done.returncode != 0:
        _refused(f"cannot mount {image} here: {done.stderr.decode().strip()}")
    try:
        yield target
    finally:
        _libc.umount2(os.fsencode(target), MNT_DETACH)
