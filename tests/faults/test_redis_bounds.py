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
from mcpsqueeze.recovery import RecoveryStore, Space, new_response_id
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
            assert (
                store.first_seen(f"s{session}", f"{result:032x}", b'{"number": 1}', space=Space("alice"))
                is None
            )
            store.put(new_response_id(), b"o" * 100, space=Space("alice"))
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
    assert store.first_seen("s", "e" * 32, b"first", space=Space("alice")) is None
    assert store.first_seen("s", "e" * 32, b"again", space=Space("alice")) == b"first"
    assert store.first_seen("s", "e" * 32, b"bob's", space=Space("bob")) is None


def test_with_a_retention_dedup_keys_expire_with_it(server: RedisServer) -> None:
    store = RedisStore(server.url, 60.0, prefix=f"t{new_response_id()[:8]}")
    store.first_seen("s", "f" * 32, b"first", space=Space("alice"))
    (key,) = _dedup_keys(store)
    assert 0 < store._client.pttl(key) <= 60_000


def _why_missing(store: RedisStore | RecoveryStore, response_id: str, tenant: str | None = None) -> str:
    with pytest.raises(RecoveryError) as caught:
        if isinstance(store, RedisStore):
            store.get(response_id, space=Space(tenant or "default"))
        else:
            store.get(response_id)
    return str(caught.value)


def test_an_original_evicted_by_max_bytes_is_reported_as_evicted_by_that_bound(server: RedisServer) -> None:
    prefix = f"t{new_response_id()[:8]}"
    writer = RedisStore(server.url, None, max_bytes=1000, prefix=prefix)
    reader = RedisStore(server.url, None, max_bytes=1000, prefix=prefix)  # another replica
    first, second = new_response_id(), new_response_id()
    writer.put(first, b"a" * 600, space=Space("alice"))
    # alice's 1,000 bytes cannot hold both: the oldest goes
    writer.put(second, b"b" * 600, space=Space("alice"))
    assert reader.get(second, space=Space("alice")) == b"b" * 600
    said = _why_missing(reader, first, "alice")
    assert "evicted" in said and "1000 bytes" in said and "max_bytes" in said, said
    assert "another tenant" not in said
    # Only alice's own eviction is named: to bob the id is simply not his.
    assert "evicted" not in _why_missing(reader, first, "bob")
    # The store a door reads (memory, then Redis) gives the same reason.
    layered = RecoveryStore(None, None, reader).scoped("alice")
    assert "evicted" in _why_missing(layered, first)


def test_an_id_never_stored_is_still_unknown_not_evicted(server: RedisServer) -> None:
    store = RedisStore(server.url, None, max_bytes=1000, prefix=f"t{new_response_id()[:8]}")
    said = _why_missing(store, new_response_id(), "alice")
    assert "Unknown response id" in said and "evicted" not in said
