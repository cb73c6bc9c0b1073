from __future__ import annotations

import os
import stat
import threading
from pathlib import Path

import pytest

from mcpsqueeze._errors import RecoveryError
from mcpsqueeze.recovery import FileStore, new_response_id


def _names(directory: Path) -> set[str]:
    return set(os.listdir(directory))


def test_a_written_original_lands_under_its_id_as_0600_and_reads_back(rec_dir: Path) -> None:
    store = FileStore(rec_dir)
    rid = new_response_id()
    path = Path(store.put(rid, b'{"content": [1, 2, 3]}') or "")
    assert path == rec_dir / f"mcpsqueeze-{rid}.json" == store.path_for(rid)
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert path.read_bytes() == b'{"content": [1, 2, 3]}'
    assert store.get(rid) == b'{"content": [1, 2, 3]}'
    assert _names(rec_dir) == {path.name}  # no tmp file left behind


def test_the_file_is_0600_even_under_a_permissive_umask(rec_dir: Path) -> None:
    old = os.umask(0)
    try:
        path = Path(FileStore(rec_dir).put(new_response_id(), b"x") or "")
    finally:
        os.umask(old)
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600


def test_the_store_creates_its_directory_0700(tmp_path: Path) -> None:
    store = FileStore(tmp_path / "cache" / "recovery")
    assert stat.S_IMODE(os.stat(store.directory).st_mode) == 0o700
    assert store.directory.is_absolute()


def test_a_large_original_is_written_completely(rec_dir: Path) -> None:
    data = os.urandom(5 * 1024 * 1024 + 7)
    rid = new_response_id()
    FileStore(rec_dir).put(rid, data)
    assert FileStore(rec_dir).get(rid) == data


def test_an_existing_tmp_file_is_not_overwritten_and_nothing_is_published(rec_dir: Path) -> None:
    rid = new_response_id()
    squatter = rec_dir / f".mcpsqueeze-{rid}.json.tmp"
    squatter.write_bytes(b"someone else's")
    with pytest.raises(RecoveryError, match="already exists"):
        FileStore(rec_dir).put(rid, b"ours")
    assert squatter.read_bytes() == b"someone else's"
    assert not (rec_dir / f"mcpsqueeze-{rid}.json").exists()


def test_a_symlink_at_the_tmp_name_is_not_followed_and_its_target_is_untouched(
    rec_dir: Path, tmp_path: Path
) -> None:
    victim = tmp_path / "victim"
    victim.write_bytes(b"precious")
    rid = new_response_id()
    (rec_dir / f".mcpsqueeze-{rid}.json.tmp").symlink_to(victim)
    with pytest.raises(RecoveryError, match="Could not store"):
        FileStore(rec_dir).put(rid, b"ours")
    assert victim.read_bytes() == b"precious"
    assert (rec_dir / f".mcpsqueeze-{rid}.json.tmp").is_symlink()
    assert not (rec_dir / f"mcpsqueeze-{rid}.json").exists()


def test_a_dangling_symlink_at_the_tmp_name_does_not_create_its_target(rec_dir: Path, tmp_path: Path) -> None:
    rid = new_response_id()
    (rec_dir / f".mcpsqueeze-{rid}.json.tmp").symlink_to(tmp_path / "created-through-link")
    with pytest.raises(RecoveryError):
        FileStore(rec_dir).put(rid, b"ours")
    assert not (tmp_path / "created-through-link").exists()


def test_a_failed_rename_removes_the_tmp_file_and_publishes_nothing(rec_dir: Path) -> None:
    rid = new_response_id()
    blocker = rec_dir / f"mcpsqueeze-{rid}.json"
    blocker.mkdir()
    (blocker / "inside").write_text("x")  # a non-empty directory cannot be renamed over
    with pytest.raises(RecoveryError, match=f"Could not store the original of response {rid}"):
        FileStore(rec_dir).put(rid, b"ours")
    assert _names(rec_dir) == {blocker.name}
    assert blocker.is_dir()


def test_a_full_disk_is_reported_as_such_and_leaves_no_file(full_dir: Path) -> None:
    store = FileStore(full_dir)
    rid = new_response_id()
    with pytest.raises(RecoveryError, match="disk is full"):
        store.put(rid, b"x" * (1024 * 1024))
    assert _names(full_dir) == set()
    # After the failure the store still works for originals that fit.
    small = new_response_id()
    store.put(small, b"fits")
    assert store.get(small) == b"fits"


def test_a_read_only_file_system_is_reported_as_such(readonly_dir: Path) -> None:
    with pytest.raises(RecoveryError, match="read-only"):
        FileStore(readonly_dir).put(new_response_id(), b"x")
    assert _names(readonly_dir) == set()


def test_reading_an_id_that_was_never_stored_says_what_happened(rec_dir: Path) -> None:
    with pytest.raises(RecoveryError, match="no recovery file") as info:
        FileStore(rec_dir).get(new_response_id())
    assert "call the tool again" in str(info.value)


def test_reading_with_a_malformed_id_is_refused(rec_dir: Path) -> None:
    with pytest.raises(RecoveryError, match="not a response id"):
        FileStore(rec_dir).get("../../etc/passwd")


def test_a_store_recreates_its_directory_when_it_was_removed(rec_dir: Path) -> None:
    store = FileStore(rec_dir)
    rec_dir.rmdir()
    rid = new_response_id()
    store.put(rid, b"again")
    assert store.get(rid) == b"again"
    assert stat.S_IMODE(os.stat(rec_dir).st_mode) == 0o700


def test_a_store_stops_writing_when_its_directory_is_swapped_for_a_symlink(
    rec_dir: Path, tmp_path: Path
) -> None:
    store = FileStore(rec_dir)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir(mode=0o700)
    rec_dir.rmdir()
    rec_dir.symlink_to(elsewhere)
    with pytest.raises(RecoveryError, match="symlink"):
        store.put(new_response_id(), b"x")
    assert os.listdir(elsewhere) == []


def test_a_store_stops_writing_when_its_directory_becomes_world_writable(rec_dir: Path) -> None:
    store = FileStore(rec_dir)
    rec_dir.chmod(0o777)
    with pytest.raises(RecoveryError, match="writable by group or others"):
        store.put(new_response_id(), b"x")


def test_concurrent_writes_of_different_ids_all_land(rec_dir: Path) -> None:
    store = FileStore(rec_dir)
    ids = [new_response_id() for _ in range(40)]
    threads = [threading.Thread(target=store.put, args=(rid, rid.encode())) for rid in ids]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert all(store.get(rid) == rid.encode() for rid in ids)
    assert len(_names(rec_dir)) == 40
