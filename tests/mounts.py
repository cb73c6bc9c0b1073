"""File systems mounted for one test (a full disk, a read-only one, delayed allocation), skipped where
this machine cannot mount (CI runs as root and can; a skip there is a failure)."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest


def mounted(target: Path, *mount_args: str) -> Iterator[Path]:
    """`mount *mount_args target` on a new 0700 directory; lazily unmounted after the test."""
    target.mkdir(mode=0o700)
    done = subprocess.run(["mount", *mount_args, str(target)], capture_output=True, check=False)
    if done.returncode != 0:
        pytest.skip(f"cannot mount {' '.join(mount_args)} here: {done.stderr.decode().strip()}")
    try:
        yield target
    finally:
        subprocess.run(["umount", "-l", str(target)], check=False)


def tmpfs(target: Path, options: str) -> Iterator[Path]:
    return mounted(target, "-t", "tmpfs", "-o", options, "tmpfs")
