"""The recovery files' fsync runs off the response path: a file is complete and in place when `write`
returns, its fsync follows in the background or at exit, and a full disk still fails the write itself."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from mcpsqueeze._errors import RecoveryError
from mcpsqueeze.recovery import FileStore, new_response_id
from mcpsqueeze.recovery._sync import sync_all
from mounts import mounted_image

SRC = Path(__file__).resolve().parents[2] / "src"


def _open_fds(directory: Path) -> int:
    """Descriptors this process holds on files in `directory` (not the rest: other tests' threads in this
    worker open and close their own meanwhile)."""
    held = 0
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:  # closed since it was listed
            continue
        held += target.startswith(f"{directory}/")
    return held


def _until(check: object, seconds: float = 10.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if check():  # type: ignore[operator]
            return True
        time.sleep(0.01)
    return False


def test_a_written_file_is_complete_and_in_place_before_its_fsync(rec_dir: Path) -> None:
    store = FileStore(rec_dir, sync_delay=3600)
    rid = new_response_id()
    before = _open_fds(rec_dir)
    path = Path(store.put(rid, b'{"content": ["whole"]}') or "")
    assert path.read_bytes() == b'{"content": ["whole"]}'
    assert os.listdir(rec_dir) == [path.name]  # renamed into place, no tmp file left
    assert _open_fds(rec_dir) == before + 1  # its descriptor, kept for the fsync to come
    sync_all()  # every file written so far made durable now


def test_flush_syncs_every_pending_file_now_and_closes_their_descriptors(rec_dir: Path) -> None:
    store = FileStore(rec_dir, sync_delay=3600)
    before = _open_fds(rec_dir)
    for _ in range(5):
        store.put(new_response_id(), b"x" * 1000)
    assert _open_fds(rec_dir) == before + 5  # one descriptor per file, kept for its fsync
    sync_all()  # every file written so far made durable now
    assert _open_fds(rec_dir) == before


def test_pending_files_are_synced_in_the_background_within_the_delay(rec_dir: Path) -> None:
    store = FileStore(rec_dir, sync_delay=0.05)
    before = _open_fds(rec_dir)
    for _ in range(3):
        store.put(new_response_id(), b"y" * 1000)
    assert _until(lambda: _open_fds(rec_dir) <= before)


def test_without_a_delay_each_file_is_synced_before_write_returns(rec_dir: Path) -> None:
    store = FileStore(rec_dir, sync_delay=None)
    before = _open_fds(rec_dir)
    store.put(new_response_id(), b"z")
    assert store._syncer is None
    assert _open_fds(rec_dir) == before


def test_files_still_pending_at_exit_are_synced_before_the_interpreter_ends(tmp_path: Path) -> None:
    rec = tmp_path / "rec"
    # The counting handler is registered first, so it runs after the store's own exit handler (LIFO).
    script = textwrap.dedent(
        f"""
        import atexit, os, sys
        synced = []
        real = os.fsync
        def counting(fd):
            synced.append(fd)
            real(fd)
        os.fsync = counting
        atexit.register(lambda: sys.stderr.write(f"fsyncs at exit: {{len(synced)}}\\n"))
        from pathlib import Path
        from mcpsqueeze.recovery import FileStore, new_response_id
        store = FileStore(Path({str(rec)!r}), sync_delay=3600)
        for _ in range(3):
            store.put(new_response_id(), b"kept")
        assert synced == [], synced  # nothing synced on the write path
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        env={**os.environ, "PYTHONPATH": str(SRC)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert "fsyncs at exit: 4" in done.stderr  # three files and their directory
    assert len(os.listdir(rec)) == 3


@pytest.fixture
def small_ext4(tmp_path: Path) -> Iterator[Path]:
    """A real 8 MiB ext4 file system (delayed allocation: blocks are only placed at writeback)."""
    if shutil.which("mkfs.ext4") is None:
        pytest.skip("mkfs.ext4 is not installed")
    image = tmp_path / "ext4.img"
    with open(image, "wb") as fh:
        fh.truncate(8 << 20)
    subprocess.run(["mkfs.ext4", "-q", str(image)], check=True, capture_output=True)
    yield from mounted_image(tmp_path / "ext4", image)


def test_a_full_delayed_allocation_disk_fails_the_write_itself_before_any_fsync(small_ext4: Path) -> None:
    store = FileStore(small_ext4 / "rec", sync_delay=3600)
    written = 0
    with pytest.raises(RecoveryError, match="disk is full"):
        for _ in range(100):  # 100 x 300 KB: far more than 8 MiB
            store.put(new_response_id(), b"o" * 300_000)
            written += 1
    assert 0 < written < 100
    sync_all()  # every file written so far made durable now
    names = os.listdir(small_ext4 / "rec")
    assert len(names) == written  # the failed one left nothing; every stored one is whole
    assert {os.path.getsize(small_ext4 / "rec" / n) for n in names} == {300_000}
