"""An original the shared Redis store dropped to stay under the tenant's `max_bytes` is reported as
evicted by that bound (and which knob raises it), as the memory cache names its bounds; not as "another
tenant's, or expired". On every replica, and through the whole store a door reads. Against a real
redis-server (started by the test on a loopback port)."""

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
    writer.put(
        second, b"b" * 600, space=Space("alice")
    )  # alice's 1,000 bytes cannot hold both: the oldest goes
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
