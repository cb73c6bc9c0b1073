"""Replicas: three `wrap --transport streamable-http` processes sharing one real redis-server behind a real
HAProxy (round robin, sessions sticky on Mcp-Session-Id), all on loopback ports the test picks.

Every result is checked against what the backend must have returned; every shrunk result is recovered
through a different replica than the one that shrank it; one replica is killed mid-run; Redis is stopped
and started again.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import secrets
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest

from fixtures.pages_backend import page
from rawclient import cli
from realservers import RedisServer, free_port, haproxy, needs_haproxy, needs_redis, wait_port

pytestmark = [needs_redis, needs_haproxy, pytest.mark.anyio]

BACKEND = [sys.executable, str(Path(__file__).parents[1] / "fixtures" / "pages_backend.py")]
BUDGET = 2000
BIG, SMALL = 6000, 400


class SessionLost(Exception):
    """The session's replica is gone (or does not know the session): open a new one."""


@dataclass
class Replica:
    name: str
    port: int
    proc: subprocess.Popen[bytes]

    @property
    def alive(self) -> bool:
        return self.proc.poll() is None


@dataclass
class Cluster:
    url: str
    redis: RedisServer
    replicas: list[Replica]
    tokens: dict[str, str]

    def live(self) -> set[str]:
        return {r.name for r in self.replicas if r.alive}


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    with start_cluster(tmp_path_factory.mktemp("replicas")) as started:
        yield started


@contextlib.contextmanager
def start_cluster(root: Path) -> Iterator[Cluster]:
    """Redis, three replicas sharing it (tenants alice and bob from a token file) and HAProxy in front."""
    redis = RedisServer(root)
    redis.start()
    secret = root / "secret"
    secret.mkdir(mode=0o700)
    tokens = {name: secrets.token_hex(32) for name in ("alice", "bob")}
    token_file = secret / "tokens"
    fd = os.open(token_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    os.write(fd, "".join(f"{n}:{t}\n" for n, t in tokens.items()).encode())
    os.close(fd)
    replicas = []
    for name in ("r1", "r2", "r3"):
        port = free_port()
        argv = cli(
            "wrap", "--transport", "streamable-http", "--port", str(port), "--recovery", "memory",
            "--recovery-url", redis.url, "--token-file", str(token_file), "--budget", str(BUDGET),
            "--stats-file", str(root / f"{name}.jsonl"), "--", *BACKEND,
        )  # fmt: skip
        log = open(root / f"{name}.log", "wb")  # noqa: SIM115 - closed with the process
        replicas.append(Replica(name, port, subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=log)))
    try:
        for replica in replicas:
            wait_port(replica.port, deadline=60, proc=replica.proc)
        with haproxy(root, [(r.name, r.port) for r in replicas]) as port:
            yield Cluster(f"http://127.0.0.1:{port}/mcp", redis, replicas, tokens)
    finally:
        for replica in replicas:
            if replica.alive:
                replica.proc.send_signal(signal.SIGTERM)
        for replica in replicas:
            replica.proc.wait(15)
        redis.stop()


class Client:
    """A raw streamable-HTTP MCP client (2025-11-25): sees the replica that answered each request."""

    def __init__(self, http: httpx2.AsyncClient, url: str, token: str) -> None:
        self.http, self.url, self.token = http, url, token
        self.session: str | None = None
        self.replica = ""
        self._ids = itertools.count(1)

    async def open(self) -> str:
        self.session = None
        reply, headers = await self._post(
            {"method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                                                "clientInfo": {"name": "replica-test", "version": "1"}}},
        )  # fmt: skip
        assert "result" in reply, reply
        self.session = headers["mcp-session-id"]
        self.replica = headers["x-replica"]
        await self._post({"method": "notifications/initialized"}, notification=True)
        return self.replica

    async def call(self, name: str, arguments: dict[str, Any]) -> tuple[dict[str, Any], str]:
        reply, headers = await self._post(
            {"method": "tools/call", "params": {"name": name, "arguments": arguments}}
        )
        assert "result" in reply, reply
        return reply["result"], headers["x-replica"]

    async def _post(self, message: dict[str, Any], notification: bool = False) -> tuple[dict[str, Any], Any]:
        body = {"jsonrpc": "2.0", **message}
        if not notification:
            body["id"] = next(self._ids)
        headers = {
            "authorization": f"Bearer {self.token}",
            "accept": "application/json, text/event-stream",
            "content-type": "application/json",
        }
        if self.session is not None:
            headers["mcp-session-id"] = self.session
            headers["mcp-protocol-version"] = "2025-11-25"
        try:
            response = await self.http.post(self.url, json=body, headers=headers)
        except httpx2.HTTPError as exc:
            raise SessionLost(repr(exc)) from exc
        if response.status_code in (404, 502, 503, 504):
            raise SessionLost(f"HTTP {response.status_code}")
        assert response.status_code in (200, 202), (response.status_code, response.text)
        if notification:
            return {}, response.headers
        if response.headers.get("content-type", "").startswith("application/json"):
            return response.json(), response.headers
        for line in response.text.splitlines():
            if line.startswith("data:") and line[5:].strip():
                data = json.loads(line[5:])
                if data.get("id") == body["id"]:
                    return data, response.headers
        raise SessionLost(f"no answer in the stream: {response.text[:200]!r}")


@dataclass
class Shrunk:
    tenant: str
    response_id: str
    by: str
    expected: str


@dataclass
class Tally:
    calls: int = 0
    passed: int = 0
    shrunk: list[Shrunk] = field(default_factory=list)
    reconnects: int = 0
    mismatched: list[str] = field(default_factory=list)


def _text(result: dict[str, Any]) -> str:
    return "\n".join(b["text"] for b in result["content"] if b.get("type") == "text")


async def _client_run(
    cluster: Cluster, http: httpx2.AsyncClient, tenant: str, number: int, calls: int, tally: Tally
) -> None:
    client = Client(http, cluster.url, cluster.tokens[tenant])
    await client.open()
    lock = anyio.Lock()

    async def one(i: int) -> None:
        key = f"{tenant}-{number}-{i}"
        size = BIG if i % 4 else SMALL
        expected = page(key, size)
        for _attempt in range(20):
            session = client.session
            try:
                result, replica = await client.call("page", {"key": key, "size": size})
                break
            except SessionLost:
                async with lock:  # one reconnect per lost session, not one per call in flight
                    if client.session == session:
                        tally.reconnects += 1
                        await _reopen(client)
        else:
            raise AssertionError(f"{key}: no replica answered")
        tally.calls += 1
        truncation = (result.get("_meta") or {}).get("truncation")
        if truncation is None:
            tally.passed += 1
            if _text(result) != expected:
                tally.mismatched.append(key)
        else:
            tally.shrunk.append(Shrunk(tenant, truncation["response_id"], replica, expected))

    async with anyio.create_task_group() as tg:
        limit = anyio.Semaphore(5)
        for i in range(calls):
            async with limit:
                tg.start_soon(_limited, limit, one, i)


async def _reopen(client: Client) -> None:
    """A new session; HAProxy may still send the first try to the replica that died (its check runs
    every 500 ms), so a lost try is tried again."""
    for _ in range(10):
        try:
            await client.open()
            return
        except SessionLost:
            await anyio.sleep(0.2)
    await client.open()


async def _limited(limit: anyio.Semaphore, func: Any, *args: Any) -> None:
    async with limit:
        await func(*args)


async def _sessions_on_every_live_replica(
    cluster: Cluster, http: httpx2.AsyncClient, tenant: str
) -> dict[str, Client]:
    found: dict[str, Client] = {}
    for _ in range(30):
        if set(found) >= cluster.live():
            break
        client = Client(http, cluster.url, cluster.tokens[tenant])
        found.setdefault(await client.open(), client)
    assert set(found) >= cluster.live(), found.keys()
    return found


async def _recover(client: Client, response_id: str) -> tuple[dict[str, Any], str]:
    return await client.call("squeeze_recover", {"response_id": response_id})


async def test_200_concurrent_calls_on_three_replicas_lose_nothing_and_recover_through_another_replica(
    cluster: Cluster,
) -> None:
    tally = Tally()
    started = time.monotonic()
    with anyio.fail_after(90):
        async with httpx2.AsyncClient(timeout=20) as http, anyio.create_task_group() as tg:
            for number in range(8):
                tg.start_soon(_client_run, cluster, http, ("alice", "bob")[number % 2], number, 25, tally)
            while tally.calls < 70:
                await anyio.sleep(0.02)
            cluster.replicas[1].proc.kill()  # r2 dies mid-session, with calls in flight
    took = time.monotonic() - started
    print(f"\n200 calls through 3 replicas (one killed) in {took:.1f} s; {tally.reconnects} reconnects")
    assert tally.calls == 200
    assert tally.mismatched == []
    small = 8 * len(range(0, 25, 4))  # every fourth call of each client is small and passes unchanged
    assert len(tally.shrunk) == 200 - small and tally.passed == small
    assert not cluster.replicas[1].alive
    assert tally.reconnects >= 1  # some client's session was on the dead replica, and carried on

    async with httpx2.AsyncClient(timeout=20) as http:
        by_tenant = {t: await _sessions_on_every_live_replica(cluster, http, t) for t in ("alice", "bob")}
        recovered = 0
        for item in tally.shrunk:
            via = next(name for name in sorted(by_tenant[item.tenant]) if name != item.by)
            result, replica = await _recover(by_tenant[item.tenant][via], item.response_id)
            assert replica != item.by
            assert result.get("isError") is False, result
            assert _text(result) == item.expected
            recovered += 1
        assert recovered == len(tally.shrunk)
        from_dead = sum(1 for item in tally.shrunk if item.by == "r2")
        print(
            f"recovered {recovered}/{len(tally.shrunk)} through another replica ({from_dead} shrunk by the dead one)"
        )

        # a session belongs to the token that opened it: bob presenting alice's session id gets 404
        for name, alices_session in by_tenant["alice"].items():
            hijack = Client(http, cluster.url, cluster.tokens["bob"])
            hijack.session = alices_session.session
            with pytest.raises(SessionLost, match="404"):
                await hijack.call("squeeze_recover", {"response_id": tally.shrunk[0].response_id})
            assert name in cluster.live()

        # tenant isolation: bob gets nothing of alice's, on any replica (the shrinking one included)
        alices = [item for item in tally.shrunk if item.tenant == "alice"][:10]
        for item in alices:
            for client in by_tenant["bob"].values():
                result, _ = await _recover(client, item.response_id)
                assert result.get("isError") is True
                assert item.expected[:50] not in _text(result)


async def test_a_stopped_redis_passes_results_unshrunk_and_shrinking_resumes_when_it_is_back(
    cluster: Cluster,
) -> None:
    async with httpx2.AsyncClient(timeout=20) as http:
        client = Client(http, cluster.url, cluster.tokens["alice"])
        await client.open()
        cluster.redis.stop()
        try:
            with anyio.fail_after(30):
                for i in range(6):
                    expected = page(f"outage-{i}", BIG)
                    result, _ = await client.call("page", {"key": f"outage-{i}", "size": BIG})
                    assert "truncation" not in (result.get("_meta") or {})
                    assert _text(result) == expected
        finally:
            cluster.redis.start()
        with anyio.fail_after(30):
            for i in itertools.count():
                expected = page(f"back-{i}", BIG)
                result, shrunk_by = await client.call("page", {"key": f"back-{i}", "size": BIG})
                truncation = (result.get("_meta") or {}).get("truncation")
                if truncation is not None:
                    break
                assert _text(result) == expected
                await anyio.sleep(0.1)
        others = await _sessions_on_every_live_replica(cluster, http, "alice")
        via = next(name for name in sorted(others) if name != shrunk_by)
        recovered, replica = await _recover(others[via], truncation["response_id"])
        assert replica != shrunk_by
        assert _text(recovered) == expected
