"""Storage faults under a running `wrap`: a full disk, a file system gone read-only, a recovery
directory that vanishes or is swapped for a symlink. Nothing is lost: a result whose original cannot
be stored passes unshrunk (identical to the backend's), and stderr says why. The file systems are real
(tmpfs, mounted for one test); wrap runs in this process (memwrap): the store is the session's own code."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from memwrap import MemoryWrap
from mounts import remount_read_only, tmpfs
from rawclient import RawClient, text

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


def _in_process(recovery_dir: Path) -> RawClient:
    """wrap in front of the demo server, its originals in `recovery_dir`, initialized."""
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
    with _in_process(rec) as client:
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
        remount_read_only(small_fs)
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


@pytest.mark.parametrize("options", ["size=64k,mode=0700", "ro,mode=0700"], ids=["full", "read-only"])
def test_an_original_that_cannot_be_stored_means_no_shrinking(
    tmp_path: Path, options: str, demo_direct: RawClient
) -> None:
    original = demo_direct.call("search_issues", {"query": "disk"})
    stats = tmp_path / "stats.jsonl"
    directory = tmp_path / "small"
    for _ in tmpfs(directory, options):
        with MemoryWrap([*_options(directory), "--stats-file", str(stats)]) as client:
            client.initialize()
            got = client.call("search_issues", {"query": "disk"})
            client.close()
        assert [p.name for p in directory.iterdir()] == []  # no partial file left behind
    assert got == original  # unshrunk: nothing lost
    line = json.loads(stats.read_text().splitlines()[-1])
    assert line["action"] == "passthrough" and line["store_failed"]
    assert "could not be stored" in client.stderr
