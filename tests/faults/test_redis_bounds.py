"""The shared Redis store's bounds, against a real redis-server (started by the test on a loopback port):
with `--retention off` the dedup index (`:d:` keys) lives as the originals do, counted in the tenant's
`max_bytes` and evicted oldest first with them, never left forever; and an original dropped to stay
under `max_bytes` is reported as evicted by that bound (and which knob raises it), as the memory cache
names its bounds, not as "another tenant's, or expired", on every replica and through the whole store a
door reads."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from mcpsqueeze._errors import RecoveryError
from mcpsqueeze.recovery import RecoveryStore, new_response_id
from mcpsqueeze.recovery._redis import RedisStore
from realservers import RedisServer, needs_redis, redis_server

pytestmark = needs_redis


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    with redis_server(tmp_path_factory.mktemp("redis")) as srv:
        yield srv


def _dedup_keys(store: RedisStore) -> list[bytes]:
    return sorted(store._client.scan_iter(match=f"{store.prefix}:*:d:*"))


def test_with_retention_off_dedup_keys_are_bounded_by_max_bytes_and_evicted(
    server: RedisServer,
) -> None:
    store = RedisStore(server.url, None, max_bytes=4000, prefix=f"t{new_response_id()[:8]}")
    for session in range(5):  # 5 ended sessions x 20 results, as in the issue
        for result in range(20):
            assert store.first_seen("alice", f"s{session}", f"{result:032x}", b'{"number": 1}') is None
            store.put("alice", new_response_id(), b"o" * 100)
    keys = _dedup_keys(store)
    assert keys, "the newest dedup keys are kept"
    assert len(keys) < 100, f"{len(keys)} dedup keys of 100 are still there"
    assert all(store._client.ttl(key) == -1 for key in keys)  # no TTL: the size bound is what ends them
    _, held = store.usage("alice")
    assert held <= 4000
    total = sum(len(key) + len(store._client.get(key) or b"") for key in keys)
    assert total <= held  # the dedup keys are counted in the bytes the bound sees


def test_a_dedup_key_still_answers_while_it_is_kept(server: RedisServer) -> None:
    store = RedisStore(server.url, None, max_bytes=1 << 20, prefix=f"t{new_response_id()[:8]}")
    assert store.first_seen("alice", "s", "e" * 32, b"first") is None
    assert store.first_seen("alice", "s", "e" * 32, b"again") == b"first"
    assert store.first_seen("bob", "s", "e" * 32, b"bob's") is None


def test_with_a_retention_dedup_keys_expire_with_it(server: RedisServer) -> None:
    store = RedisStore(server.url, 60.0, prefix=f"t{new_response_id()[:8]}")
    store.first_seen("alice", "s", "f" * 32, b"first")
    (key,) = _dedup_keys(store)
    assert 0 < store._client.pttl(key) <= 60_000


def _why_missing(store: RedisStore | RecoveryStore, *args: str) -> str:
    with pytest.raises(RecoveryError) as caught:
        store.get(*args) if isinstance(store, RedisStore) else store.load(*args)
    return str(caught.value)


def test_an_original_evicted_by_max_bytes_is_reported_as_evicted_by_that_bound(server: RedisServer) -> None:
    prefix = f"t{new_response_id()[:8]}"
    writer = RedisStore(server.url, None, max_bytes=1000, prefix=prefix)
    reader = RedisStore(server.url, None, max_bytes=1000, prefix=prefix)  # another replica
    first, second = new_response_id(), new_response_id()
    writer.put("alice", first, b"a" * 600)
    writer.put("alice", second, b"b" * 600)  # alice's 1,000 bytes cannot hold both: the oldest goes
    assert reader.get("alice", second) == b"b" * 600
    said = _why_missing(reader, "alice", first)
    assert "evicted" in said and "1000 bytes" in said and "max_bytes" in said, said
    assert "another tenant" not in said
    # Only alice's own eviction is named: to bob the id is simply not his.
    assert "evicted" not in _why_missing(reader, "bob", first)
    # The store a door reads (memory, then Redis) gives the same reason.
    layered = RecoveryStore(None, None, reader).scoped("alice")
    assert "evicted" in _why_missing(layered, first)


def test_an_id_never_stored_is_still_unknown_not_evicted(server: RedisServer) -> None:
    store = RedisStore(server.url, None, max_bytes=1000, prefix=f"t{new_response_id()[:8]}")
    said = _why_missing(store, "alice", new_response_id())
    assert "Unknown response id" in said and "evicted" not in said
