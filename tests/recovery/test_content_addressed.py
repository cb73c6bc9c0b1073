"""A repeated original is stored once: shared memory blobs, alias records on disk."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from mcpsqueeze._errors import RecoveryError, RefusedPathError
from mcpsqueeze.recovery import FileStore, MemoryCache, RecoveryStore, clean_directory, new_response_id
from mcpsqueeze.recovery._ids import FINAL_NAME_RE, alias_record, alias_target


def test_ids_put_with_one_key_share_the_bytes_and_count_them_once() -> None:
    cache = MemoryCache(max_bytes=100)
    a, b = new_response_id(), new_response_id()
    assert cache.put(a, b"x" * 60, digest="k") is None
    assert cache.put(b, b"x" * 60, digest="k") is None  # would not fit twice
    assert cache.total_bytes == 60 and len(cache) == 2
    assert cache.get(a) is cache.get(b)


def test_evicting_one_sharer_keeps_the_bytes_for_the_other() -> None:
    cache = MemoryCache(max_entries=2)
    a, b, c = new_response_id(), new_response_id(), new_response_id()
    cache.put(a, b"shared", digest="k")
    cache.put(b, b"shared", digest="k")
    cache.put(c, b"other")
    with pytest.raises(RecoveryError, match="evicted"):
        cache.get(a)
    assert cache.get(b) == b"shared"
    assert cache.total_bytes == len(b"shared") + len(b"other")


def test_the_store_writes_a_repeated_original_once_and_aliases_the_rest(tmp_path: Path) -> None:
    store = RecoveryStore(MemoryCache(), FileStore(tmp_path / "rec"))
    a, b = new_response_id(), new_response_id()
    first = store.put(a, b'{"content":[]}')
    second = store.put(b, b'{"content":[]}')
    assert first == second  # the record names the file that holds the bytes
    assert (tmp_path / "rec" / f"mcpsqueeze-{b}.json").read_bytes() == alias_record(a)
    assert store.files is not None and store.files.get(b) == b'{"content":[]}'


def test_an_alias_file_keeps_clean_s_name_pattern_and_mode(tmp_path: Path) -> None:
    store = FileStore(tmp_path / "rec")
    a, b = new_response_id(), new_response_id()
    store.put(a, b"{}")
    store.alias(b, a)
    for path in (tmp_path / "rec").iterdir():
        assert FINAL_NAME_RE.match(path.name)
        assert path.stat().st_mode & 0o777 == 0o600


def test_aliasing_refreshes_the_target_so_retention_never_removes_it_first(tmp_path: Path) -> None:
    store = FileStore(tmp_path / "rec")
    a, b = new_response_id(), new_response_id()
    target = Path(store.put(a, b"{}") or "")
    old = time.time() - 7200
    os.utime(target, (old, old))
    store.alias(b, a)
    assert target.stat().st_mtime > old + 3600
    assert clean_directory(tmp_path / "rec", 3600).deleted == []


def test_when_the_earlier_file_is_gone_the_original_is_stored_in_full(tmp_path: Path) -> None:
    store = RecoveryStore(None, FileStore(tmp_path / "rec"))
    a, b = new_response_id(), new_response_id()
    first = store.put(a, b"{}")
    assert first is not None
    os.unlink(first)
    second = store.put(b, b"{}")
    assert second is not None and Path(second).read_bytes() == b"{}"


def test_an_alias_of_an_alias_is_refused(tmp_path: Path) -> None:
    store = FileStore(tmp_path / "rec")
    a, b = new_response_id(), new_response_id()
    store.put(a, alias_record(b))
    store.put(b, alias_record(a))
    with pytest.raises(RefusedPathError, match="alias of an alias"):
        store.get(a)


def test_only_the_exact_alias_shape_is_an_alias() -> None:
    rid = new_response_id()
    assert alias_target(alias_record(rid)) == rid
    assert alias_target(alias_record(rid) + b"\n") is None
    assert alias_target(b'{"content":[],"mcpsqueeze/alias_of":"' + rid.encode() + b'"}') is None


def test_a_repeated_original_in_memory_shares_the_earlier_bytes_and_outlives_their_first_id() -> None:
    cache = MemoryCache(max_entries=2, max_bytes=100)
    store = RecoveryStore(cache, None)
    a, b, c = new_response_id(), new_response_id(), new_response_id()
    store.put(a, b"x" * 60)
    store.put(b, b"x" * 60)  # would not fit as a copy
    assert cache.total_bytes == 60 and len(cache) == 2
    store.put(c, b"y")  # evicts the least recently used: a goes, b keeps the bytes
    with pytest.raises(RecoveryError, match="evicted"):
        store.get(a)
    assert store.get(b) == b"x" * 60
    assert cache.total_bytes == 61
