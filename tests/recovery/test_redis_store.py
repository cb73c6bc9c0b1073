"""The Redis store against a real redis-server (started by the test on a loopback port): no mocks. Also
through serve's API, tenants apart."""

from __future__ import annotations

import json
import secrets
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from mcpsqueeze._errors import RecoveryError, UsageError
from mcpsqueeze.recovery import MemoryCache, RecoveryStore, Space, new_response_id
from mcpsqueeze.recovery._redis import RedisStore
from realservers import RedisServer, needs_redis, redis_server
from serve.serve_api import api, serve_in_process, write_token

pytestmark = needs_redis

PAGES = [sys.executable, str(Path(__file__).parents[1] / "fixtures" / "pages_backend.py")]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    with redis_server(tmp_path_factory.mktemp("redis")) as srv:
        yield srv


def _store(server: RedisServer, **kwargs: object) -> RedisStore:
    retention = kwargs.pop("retention", 3600.0)
    return RedisStore(server.url, retention, prefix=f"t{new_response_id()[:8]}", **kwargs)  # type: ignore[arg-type]


def _poll(check: object, deadline: float = 10.0) -> None:
    end = time.monotonic() + deadline
    while not check():  # type: ignore[operator]
        assert time.monotonic() < end, "condition not reached before the deadline"
        time.sleep(0.05)


def test_an_original_comes_back_byte_for_byte_for_its_tenant(server: RedisServer) -> None:
    store = _store(server)
    rid = new_response_id()
    store.put(rid, b'{"content": [{"type": "text", "text": "\xc3\xa9"}]}', space=Space("alice"))
    assert store.get(rid, space=Space("alice")) == b'{"content": [{"type": "text", "text": "\xc3\xa9"}]}'
    assert store.usage("alice") == (1, 45)


def test_another_tenant_cannot_read_an_original(server: RedisServer) -> None:
    store = _store(server)
    rid = new_response_id()
    store.put(rid, b"secret", space=Space("alice"))
    with pytest.raises(RecoveryError, match="another tenant"):
        store.get(rid, space=Space("bob"))


def test_originals_expire_after_the_retention(server: RedisServer) -> None:
    store = _store(server, retention=0.2)
    rid = new_response_id()
    store.put(rid, b"x" * 100, space=Space("alice"))

    def gone() -> bool:
        try:
            store.get(rid, space=Space("alice"))
        except RecoveryError:
            return True
        return False

    _poll(gone)


def test_the_size_bound_evicts_the_oldest_originals_first(server: RedisServer) -> None:
    store = _store(server, max_bytes=250)
    ids = [new_response_id() for _ in range(4)]
    for rid in ids:
        store.put(rid, b"y" * 100, space=Space("alice"))
    assert store.usage("alice") == (2, 200)
    for rid in ids[:2]:
        with pytest.raises(RecoveryError):
            store.get(rid, space=Space("alice"))
    assert [store.get(rid, space=Space("alice")) for rid in ids[2:]] == [b"y" * 100] * 2


def test_one_tenant_filling_its_bound_evicts_nothing_of_another(server: RedisServer) -> None:
    store = _store(server, max_bytes=250)
    kept = new_response_id()
    store.put(kept, b"b" * 200, space=Space("bob"))
    for _ in range(5):
        store.put(new_response_id(), b"a" * 200, space=Space("alice"))
    assert store.get(kept, space=Space("bob")) == b"b" * 200


def test_an_original_larger_than_the_bound_is_refused(server: RedisServer) -> None:
    store = _store(server, max_bytes=10)
    with pytest.raises(RecoveryError, match="exceed"):
        store.put(new_response_id(), b"z" * 11, space=Space("alice"))


def test_the_dedup_index_remembers_the_first_sighting_per_tenant_and_scope(server: RedisServer) -> None:
    store = _store(server)
    assert store.first_seen("s1", "d" * 32, b"first", space=Space("alice")) is None
    assert store.first_seen("s1", "d" * 32, b"second", space=Space("alice")) == b"first"
    assert store.first_seen("s1", "d" * 32, b"bobs", space=Space("bob")) is None
    assert store.first_seen("s2", "d" * 32, b"other session", space=Space("alice")) is None


def test_the_record_of_a_call_is_the_latest_one_kept_per_tenant_and_scope(server: RedisServer) -> None:
    one, two = _store(server), _store(server)
    two.prefix = one.prefix  # two replicas on one Redis
    call = '["s", "write", {"n": 600}]'
    assert one.last_call("conv", call, space=Space("alice")) is None
    one.remember_call("conv", call, b"changed", space=Space("alice"))
    assert two.last_call("conv", call, space=Space("alice")) == b"changed"
    two.remember_call("conv", call, b"shown whole", space=Space("alice"))
    assert one.last_call("conv", call, space=Space("alice")) == b"shown whole"
    assert one.last_call("conv", call, space=Space("bob")) is None
    assert one.last_call("other conv", call, space=Space("alice")) is None
    assert one.last_call("conv", '["s", "write", {"n": 1}]', space=Space("alice")) is None
    assert one.usage("alice")[0] == 1  # replaced, not added: one entry, counted like an original


def test_call_records_expire_with_the_retention_and_are_evicted_with_the_bound(server: RedisServer) -> None:
    brief = _store(server, retention=0.2)
    brief.remember_call("conv", "call", b"record", space=Space("alice"))
    _poll(lambda: brief.last_call("conv", "call", space=Space("alice")) is None)
    bounded = _store(server, max_bytes=300)
    bounded.remember_call("conv", "call", b"record", space=Space("alice"))
    rid = new_response_id()
    bounded.put(rid, b"z" * 250, space=Space("alice"))
    assert bounded.last_call("conv", "call", space=Space("alice")) is None
    assert bounded.get(rid, space=Space("alice")) == b"z" * 250


def test_url_parameters_set_the_bound_and_timeout_and_bad_ones_are_refused(server: RedisServer) -> None:
    store = RedisStore(server.url + "?max_bytes=1K&timeout=0.25", None)
    assert (store.max_bytes, store.timeout) == (1024, 0.25)
    with pytest.raises(UsageError, match="max_bytes"):
        RedisStore(server.url + "?max_bytes=lots", None)
    with pytest.raises(UsageError, match="redis://"):
        RedisStore("http://127.0.0.1:1/0", None)


def test_a_stopped_redis_fails_fast_and_the_store_resumes_when_it_is_back(tmp_path: Path) -> None:
    with redis_server(tmp_path) as srv:
        store = RedisStore(srv.url, 3600.0)
        store.put(new_response_id(), b"before", space=Space("alice"))
        srv.stop()
        started = time.monotonic()
        for _ in range(20):
            with pytest.raises(RecoveryError, match=r"unavailable|could not"):
                store.put(new_response_id(), b"during", space=Space("alice"))
        print(f"20 refused puts while Redis was down took {time.monotonic() - started:.3f} s")
        srv.start()
        rid = new_response_id()

        def stored() -> bool:
            try:
                store.put(rid, b"after", space=Space("alice"))
            except RecoveryError:
                return False
            return True

        _poll(stored)
        assert store.get(rid, space=Space("alice")) == b"after"


def test_the_facade_refuses_to_store_when_redis_is_down_even_with_memory_in_front(tmp_path: Path) -> None:
    with redis_server(tmp_path) as srv:
        facade = RecoveryStore(MemoryCache(), None, RedisStore(srv.url, 3600.0))
        srv.stop()
        rid = new_response_id()
        with pytest.raises(RecoveryError):
            facade.put(rid, b"original")
        with pytest.raises(RecoveryError):
            facade.get(rid)  # not half-stored in memory either


def test_an_original_stored_by_one_replica_loads_through_another(server: RedisServer) -> None:
    prefix = f"t{new_response_id()[:8]}"
    one = RecoveryStore(MemoryCache(), None, RedisStore(server.url, 3600.0, prefix=prefix)).scoped("acme")
    two = RecoveryStore(MemoryCache(), None, RedisStore(server.url, 3600.0, prefix=prefix)).scoped("acme")
    rid = new_response_id()
    one.put(rid, b"shrunk on one")
    assert two.get(rid) == b"shrunk on one"
    with pytest.raises(RecoveryError):
        two.scoped("globex").get(rid)


def test_tenants_of_one_process_cannot_load_each_others_originals_from_local_memory(
    server: RedisServer,
) -> None:
    base = RecoveryStore(
        MemoryCache(), None, RedisStore(server.url, 3600.0, prefix=f"t{new_response_id()[:8]}")
    )
    alice, bob = base.scoped("alice", isolate=True), base.scoped("bob", isolate=True)
    rid = new_response_id()
    alice.put(rid, b"alice's")
    assert alice.get(rid) == b"alice's"
    with pytest.raises(RecoveryError):
        bob.get(rid)
    without_redis = RecoveryStore(base.memory, None)
    with pytest.raises(RecoveryError):
        without_redis.scoped("bob", isolate=True).get(rid)


def test_a_full_redis_refuses_one_original_without_taking_the_store_offline(server: RedisServer) -> None:
    import redis

    admin = redis.Redis.from_url(server.url)
    store = _store(server)
    admin.config_set("maxmemory-policy", "noeviction")
    admin.config_set("maxmemory", 1)  # below what Redis already uses: every write is refused (OOM)
    try:
        with pytest.raises(RecoveryError, match=r"OOM|maxmemory"):
            store.put(new_response_id(), b"refused", space=Space("alice"))
    finally:
        admin.config_set("maxmemory", 0)
    rid = new_response_id()
    store.put(rid, b"stored", space=Space("alice"))  # no back-off: a full Redis is not a dead one
    assert store.get(rid, space=Space("alice")) == b"stored"


def test_serve_keeps_each_named_tenants_originals_and_dedup_index_apart(
    server: RedisServer, tmp_path: Path
) -> None:
    """Through serve's TCP API (in this process) with a token file naming tenants: one tenant never sees
    another's originals."""
    secret = tmp_path / "secret"
    secret.mkdir(mode=0o700)
    alice, bob = secrets.token_hex(32), secrets.token_hex(32)
    tokens = secret / "tokens"
    write_token(tokens, f"alice:{alice}\nbob:{bob}\n")
    with serve_in_process(
        "--recovery-dir", str(tmp_path / "rec"), "--budget", "2000", "--recovery-url", server.url,
        "--listen", "127.0.0.1:0", "--token-file", str(tokens), "-n", "pages", "--", *PAGES,
    ) as url:  # fmt: skip
        call = {"server": "pages", "tool": "page", "arguments": {"key": "k", "size": 6000}}
        status, first = api(url, alice, "/v1/call", call)
        assert status == 200 and first["action"] == "shrink", first
        rid = first["response_id"]
        status, again = api(url, bob, "/v1/call", call)
        assert status == 200 and again["action"] == "shrink"  # not deduplicated against alice's
        status, mine = api(url, alice, f"/v1/recover/{rid}")
        assert status == 200
        assert mine["result"]["content"][0]["text"].startswith('[{"key": "k"')
        status, theirs = api(url, bob, f"/v1/recover/{rid}")
        assert status == 404 and '"key": "k"' not in json.dumps(theirs)
        status, repeat = api(url, alice, "/v1/call", call)
        # The shell door never deduplicates (stdout must carry data); the dedup index's tenant
        # isolation is tested through wrap (tests/proxy/test_wrap_replicas.py) and the Redis store.
        assert repeat["action"] == "shrink" and repeat["response_id"] != rid
