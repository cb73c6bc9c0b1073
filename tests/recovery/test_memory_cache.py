from __future__ import annotations

import contextlib
import threading
import time
import zlib
from collections.abc import Callable

import pytest

from mcpsqueeze._errors import RecoveryError
from mcpsqueeze.recovery import MemoryCache, new_response_id


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_a_stored_original_comes_back_unchanged() -> None:
    cache = MemoryCache()
    rid = new_response_id()
    assert cache.put(rid, b"original bytes") is None
    assert cache.get(rid) == b"original bytes"
    assert len(cache) == 1
    assert cache.total_bytes == len(b"original bytes")


def test_an_entry_expires_after_the_ttl_and_the_error_says_so() -> None:
    clock = FakeClock()
    cache = MemoryCache(ttl=300, clock=clock)
    rid = new_response_id()
    cache.put(rid, b"x")
    clock.now += 299.9
    assert cache.get(rid) == b"x"
    clock.now += 0.1
    with pytest.raises(RecoveryError, match=r"expired after 300 s") as info:
        cache.get(rid)
    assert "original_response_file" in str(info.value)
    assert len(cache) == 0
    assert cache.total_bytes == 0
    with pytest.raises(RecoveryError, match="expired"):
        cache.get(rid)  # still explained on a second attempt


def test_expired_entries_stop_counting_towards_len_and_bytes() -> None:
    clock = FakeClock()
    cache = MemoryCache(ttl=10, clock=clock)
    cache.put(new_response_id(), b"12345")
    clock.now += 5
    cache.put(new_response_id(), b"123")
    clock.now += 6
    assert len(cache) == 1
    assert cache.total_bytes == 3


def test_an_unknown_id_is_reported_as_unknown_not_expired() -> None:
    cache = MemoryCache()
    with pytest.raises(RecoveryError, match="Unknown response id") as info:
        cache.get(new_response_id())
    assert "expired" not in str(info.value)


def test_a_malformed_id_is_named_as_such() -> None:
    with pytest.raises(RecoveryError, match="not a response id"):
        MemoryCache().get("../../etc/passwd")


def test_the_least_recently_used_entry_is_evicted_when_entries_are_full() -> None:
    cache = MemoryCache(max_entries=2)
    a, b, c = (new_response_id() for _ in range(3))
    cache.put(a, b"a")
    cache.put(b, b"b")
    cache.get(a)  # a is now more recent than b
    cache.put(c, b"c")
    assert cache.get(a) == b"a"
    assert cache.get(c) == b"c"
    with pytest.raises(RecoveryError, match="evicted"):
        cache.get(b)
    assert len(cache) == 2


def test_old_entries_are_evicted_until_the_new_one_fits_the_byte_limit() -> None:
    cache = MemoryCache(max_bytes=10)
    a, b, c = (new_response_id() for _ in range(3))
    cache.put(a, b"1234")
    cache.put(b, b"1234")
    cache.put(c, b"123456")
    assert cache.total_bytes == 10
    with pytest.raises(RecoveryError):
        cache.get(a)
    assert cache.get(b) == b"1234"
    assert cache.get(c) == b"123456"


def test_an_original_larger_than_the_whole_cache_is_refused_without_evicting_anything() -> None:
    cache = MemoryCache(max_bytes=10)
    kept, big = new_response_id(), new_response_id()
    cache.put(kept, b"small")
    with pytest.raises(RecoveryError, match="exceed the memory cache limit"):
        cache.put(big, b"x" * 11)
    assert cache.get(kept) == b"small"
    with pytest.raises(RecoveryError, match="too large"):
        cache.get(big)


def test_storing_the_same_id_again_replaces_it_without_double_counting() -> None:
    cache = MemoryCache()
    rid = new_response_id()
    cache.put(rid, b"first")
    cache.put(rid, b"second!")
    assert cache.get(rid) == b"second!"
    assert cache.total_bytes == len(b"second!")
    assert len(cache) == 1


def test_concurrent_puts_and_gets_keep_the_bounds() -> None:
    cache = MemoryCache(max_entries=8, max_bytes=1000)
    errors: list[BaseException] = []

    def work() -> None:
        try:
            for _ in range(300):
                rid = new_response_id()
                cache.put(rid, b"x" * 50)
                with contextlib.suppress(RecoveryError):  # evicted by another thread: allowed
                    cache.get(rid)
                assert len(cache) <= 8
                assert cache.total_bytes <= 1000
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=work) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert len(cache) == 8
    assert cache.total_bytes == 400


def test_nonsensical_limits_are_rejected_by_the_settings_that_size_the_cache() -> None:
    from mcpsqueeze import Squeezer, UsageError

    for kwargs in [{"cache_ttl": 0.0}, {"cache_entries": 0}, {"cache_bytes": 0}]:
        with pytest.raises(UsageError):
            Squeezer(**kwargs)  # type: ignore[arg-type]


def test_a_view_into_a_big_buffer_is_kept_as_its_own_bytes_and_counted_so() -> None:
    buffer = bytearray(b"y" * 1_000_000)
    cache = MemoryCache(max_bytes=100)
    rid = new_response_id()
    assert cache.put(rid, memoryview(buffer)[:10]) is None
    kept = cache.get(rid)
    assert type(kept) is bytes and kept == b"y" * 10
    assert cache.total_bytes == 10
    buffer[:10] = b"z" * 10  # the cache holds a copy, not a view that pins (or follows) the buffer
    assert cache.get(rid) == b"y" * 10


def _until(check: Callable[[], bool], seconds: float = 30.0) -> bool:
    deadline = time.monotonic() + seconds
    while not check():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


def _records(n: int) -> bytes:
    import orjson

    return orjson.dumps(
        [{"id": i, "name": f"item-{i}", "status": "open", "bio": "lorem ipsum " * 5} for i in range(n)]
    )


def test_a_big_original_is_held_compressed_and_comes_back_unchanged() -> None:
    cache = MemoryCache()
    rid = new_response_id()
    original = _records(5000)
    assert len(original) > 256 * 1024
    assert cache.put(rid, original) is None
    assert _until(lambda: cache.total_bytes < len(original) // 3)  # the bound counts what is held: compressed
    assert cache.get(rid) == original


def test_an_incompressible_big_original_is_kept_as_it_is() -> None:
    import os

    cache = MemoryCache()
    rid = new_response_id()
    original = os.urandom(200 * 1024)
    assert cache.put(rid, original) is None
    records = _records(5000)  # compressed after the first, by the one packer: once it is, the first was tried
    cache.put(new_response_id(), records)
    assert _until(lambda: cache.total_bytes < len(original) + len(records))
    assert cache.total_bytes == len(original) + len(zlib.compress(records, 1))
    assert cache.get(rid) == original


def test_a_small_original_from_orjson_is_held_at_its_own_size() -> None:
    import tracemalloc

    cache = MemoryCache()
    rid = new_response_id()
    tracemalloc.start()
    try:
        original = _records(150)  # orjson reserves several times the length it writes
        assert len(original) < 64 * 1024
        reserved = tracemalloc.get_traced_memory()[0]
        cache.put(rid, original)
        del original
        held = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    assert cache.total_bytes < 64 * 1024
    assert held < cache.total_bytes * 2 < reserved
