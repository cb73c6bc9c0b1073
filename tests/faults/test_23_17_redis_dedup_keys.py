"""Issue 23 item 17: with `--retention off`, the Redis dedup index (`:d:` keys) lives as the originals
do: counted in the tenant's `max_bytes` and evicted oldest first with them, never left forever.
Against a real redis-server (started by the test on a loopback port)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from mcpsqueeze.recovery import Space, new_response_id
from mcpsqueeze.recovery._redis import RedisStore
from realservers import RedisServer, needs_redis, redis_server

pytestmark = needs_redis


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    with redis_server(tmp_path_factory.mktemp("redis")) as srv:
        yield srv


def _dedup_keys(store: RedisStore) -> list[bytes]:
    return sorted(store._client.scan_iter(match=f"{store.prefix}:*:d:*"))


def test_23_17_with_retention_off_dedup_keys_are_bounded_by_max_bytes_and_evicted(
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


def test_23_17_a_dedup_key_still_answers_while_it_is_kept(server: RedisServer) -> None:
    store = RedisStore(server.url, None, max_bytes=1 << 20, prefix=f"t{new_response_id()[:8]}")
    assert store.first_seen("s", "e" * 32, b"first", space=Space("alice")) is None
    assert store.first_seen("s", "e" * 32, b"again", space=Space("alice")) == b"first"
    assert store.first_seen("s", "e" * 32, b"bob's", space=Space("bob")) is None


def test_23_17_with_a_retention_dedup_keys_expire_with_it(server: RedisServer) -> None:
    store = RedisStore(server.url, 60.0, prefix=f"t{new_response_id()[:8]}")
    store.first_seen("s", "f" * 32, b"first", space=Space("alice"))
    (key,) = _dedup_keys(store)
    assert 0 < store._client.pttl(key) <= 60_000
