"""Storage faults under a running `wrap`: a full disk, a file system gone read-only, a recovery
directory that vanishes or is swapped for a symlink. Nothing is lost: a result whose original cannot
be stored passes unshrunk (identical to the backend's), and stderr says why. The full disk runs the spawned
CLI; the other three run the same wrap in-process (memwrap): the store is the session's own code either
way."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from memwrap import MemoryWrap
from mounts import tmpfs
from rawclient import RawClient, cli, demo_server, text

BIG = ("search_issues", {"query": "faults", "limit": 300})


@pytest.fixture
def small_fs(tmp_path: Path) -> Iterator[Path]:
    """A real 1 MiB file system, mounted for this test only."""
    yield from tmpfs(tmp_path / "fs", "size=1m,mode=0700")


@pytest.fixture(scope="module")
def direct(demo_direct: RawClient) -> dict[str, Any]:
    return demo_direct.call(*BIG)


def _options(recovery_dir: Path) -> list[str]:
    return ["--recovery", "files", "--recovery-dir", str(recovery_dir), "--page-size", "100000000"]


def _wrap(recovery_dir: Path) -> RawClient:
    client = RawClient(cli("wrap", *_options(recovery_dir), "--", *demo_server()))
    client.initialize()
    return client


def _in_process(recovery_dir: Path) -> RawClient:
    """`_wrap`'s session, run in this process (memwrap)."""
    client = MemoryWrap(_options(recovery_dir))
    client.initialize()
    return client


def _fill(directory: Path, leave: int) -> None:
    """Fill the file system holding `directory` until at most `leave` bytes are free."""
    filler = directory / "filler"
    with open(filler, "wb") as fh:
        chunk = b"\0" * 65536
        try:
            while os.statvfs(directory).f_bavail * os.statvfs(directory).f_frsize > leave + len(chunk):
                fh.write(chunk)
                fh.flush()
        except OSError:
            pass


def test_a_full_disk_passes_the_result_unshrunk_and_says_the_disk_is_full(
    small_fs: Path, direct: dict[str, Any]
) -> None:
    rec = small_fs / "rec"
    with _wrap(rec) as client:
        _fill(small_fs, leave=8192)
        got = client.call(*BIG)
        code = client.close()
    assert got == direct  # nothing lost: the whole original, unchanged
    assert "the disk is full" in client.stderr
    assert "not shrunk because the original could not be stored: 1" in client.stderr
    assert code == 0
    assert [p.name for p in rec.iterdir()] == []  # no partial file left behind


def test_a_file_system_gone_read_only_passes_the_result_unshrunk(
    small_fs: Path, direct: dict[str, Any]
) -> None:
    rec = small_fs / "rec"
    with _in_process(rec) as client:
        first = client.call("echo", {"text": "before"})
        remount = subprocess.run(["mount", "-o", "remount,ro", str(small_fs)], capture_output=True)
        if remount.returncode != 0:
            pytest.skip(f"cannot remount read-only: {remount.stderr.decode().strip()}")
        got = client.call(*BIG)
        client.close()
    assert text(first) == "before"
    assert got == direct
    assert "read-only" in client.stderr


def test_a_vanished_recovery_directory_is_recreated_and_the_original_recovered(
    tmp_path: Path, direct: dict[str, Any]
) -> None:
    rec = tmp_path / "rec"
    with _in_process(rec) as client:
        shutil.rmtree(rec)
        got = client.call(*BIG)
        meta = got["_meta"]["truncation"]
        recovered = client.call("squeeze_recover", {"response_id": meta["response_id"]})
        client.close()
    assert Path(meta["original_response_file"]).parent == rec.resolve()
    assert oct(rec.stat().st_mode & 0o777) == "0o700"
    assert text(recovered) == text(direct)


def test_a_recovery_directory_swapped_for_a_symlink_is_refused_and_the_result_passes_unshrunk(
    tmp_path: Path, direct: dict[str, Any]
) -> None:
    rec = tmp_path / "rec"
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir(mode=0o700)
    with _in_process(rec) as client:
        shutil.rmtree(rec)
        rec.symlink_to(elsewhere)
        got = client.call(*BIG)
        client.close()
    assert got == direct
    assert list(elsewhere.iterdir()) == []  # nothing written through the link
    assert "symlink" in client.stderr
