"""Shared fixtures: a private recovery directory, planted files, and tiny real file systems."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from mcpsqueeze.recovery import ensure_private_dir, new_response_id
from mounts import tmpfs

FOREIGN_UID = 65534


@pytest.fixture
def rec_dir(tmp_path: Path) -> Path:
    return ensure_private_dir(tmp_path / "recovery")


def plant(directory: Path, data: bytes = b'{"content": []}', response_id: str | None = None) -> Path:
    """Write a recovery file the way the store would, without going through the store."""
    path = directory / f"mcpsqueeze-{response_id or new_response_id()}.json"
    path.write_bytes(data)
    path.chmod(0o600)
    return path


def age(path: Path, seconds: float, now: float) -> None:
    os.utime(path, (now - seconds, now - seconds), follow_symlinks=False)


needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="chown to another uid needs root")


@pytest.fixture
def full_dir(tmp_path: Path) -> Iterator[Path]:
    """A real 64 KiB file system: writing more than that fails with ENOSPC."""
    yield from tmpfs(tmp_path / "full", "size=64k,mode=0700")


@pytest.fixture
def readonly_dir(tmp_path: Path) -> Iterator[Path]:
    """A real read-only file system (root ignores chmod 0500, but not EROFS)."""
    yield from tmpfs(tmp_path / "ro", "ro,size=64k,mode=0700")
