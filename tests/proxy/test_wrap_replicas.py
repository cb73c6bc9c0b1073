"""Replicas: three `wrap --transport streamable-http` processes sharing one real redis-server behind a real
HAProxy (round robin, sessions sticky on Mcp-Session-Id), all on loopback ports the test picks.

Every result is checked against what the backend must have returned; every shrunk result is recovered
through a different replica than the one that shrank it; one replica is killed mid-run; Redis is stopped
and started again. A 2026-07-28 request (the SDK's own stateless client) carries no Mcp-Session-Id, so
HAProxy round-robins every request: one client's calls land on all replicas, and its `squeeze_recover`
usually reaches another replica than the one that shrank the result; tenants stay apart on that path too.
`full` through another replica than the one that served the call answers with its original, the tool not
run again (two replicas of a backend that counts its calls).
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import random
import secrets
import signal
import socket
import subprocess
import sys
import time
from collections import Counter
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import httpx2
import mcp_types as types
import pytest
from mcp import Client as SdkClient
from mcp.client.streamable_http import streamable_http_client
from pydantic import TypeAdapter

from fixtures.ledger_server import calls_of, rows_text
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
    tombstone: socket.socket | None = None

    @property
    def alive(self) -> bool:
        return self.proc.poll() is None

    def kill(self) -> None:
        """Kill the replica and keep its port bound (not listening: HAProxy's probes are refused), so no
        other test's server takes the freed port and answers in the dead replica's name."""
        self.proc.kill()
        self.proc.wait(15)
        self.tombstone = socket.socket()
        self.tombstone.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.tombstone.bind(("127.0.0.1", self.port))


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
    try:
        tokens, token_file = write_tokens(root)
        with (
            start_replicas(root, redis, token_file, ("r1", "r2", "r3"), BACKEND) as replicas,
            haproxy(root, [(r.name, r.port) for r in replicas]) as port,
        ):
            yield Cluster(f"http://127.0.0.1:{port}/mcp", redis, replicas, tokens)
    finally:
        redis.stop()


def write_tokens(root: Path) -> tuple[dict[str, str], Path]:
    """A token file (0600, in a 0700 directory) naming tenants alice and bob; their tokens."""
    secret = root / "secret"
    secret.mkdir(mode=0o700)
    tokens = {name: secrets.token_hex(32) for name in ("alice", "bob")}
    token_file = secret / "tokens"
    fd = os.open(token_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    os.write(fd, "".join(f"{n}:{t}\n" for n, t in tokens.items()).encode())
    os.close(fd)
    return tokens, token_file


@contextlib.contextmanager
def start_replicas(
    root: Path, redis: RedisServer, token_file: Path, names: tuple[str, ...], backend: list[str]
) -> Iterator[list[Replica]]:
    """`wrap --transport streamable-http` replicas of `backend`, sharing `redis`, listening on loopback."""
    replicas = []
    for name in names:
        port = free_port()
        argv = cli(
            "wrap", "--transport", "streamable-http", "--port", str(port), "--recovery", "memory",
            "--recovery-url", redis.url, "--token-file", str(token_file), "--budget", str(BUDGET),
            "--stats-file", str(root / f"{name}.jsonl"), "--", *backend,
        )  # fmt: skip
        log = open(root / f"{name}.log", "wb")  # noqa: SIM115 - closed with the process
        replicas.append(Replica(name, port, subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=log)))
    try:
        for replica in replicas:
            wait_port(replica.port, deadline=60, proc=replica.proc)
        yield replicas
    finally:
        for replica in replicas:
            if replica.alive:
                replica.proc.send_signal(signal.SIGTERM)
        for replica in replicas:
            replica.proc.wait(15)
            if replica.tombstone is not None:
                replica.tombstone.close()


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
    clients: int = 0  # the clients whose sessions all open before any calls (0: none wait)
    opened: int = 0  # clients whose first session is open
    all_open: anyio.Event = field(default_factory=anyio.Event)
    reconnects: int = 0
    mismatched: list[str] = field(default_factory=list)


def _text(result: dict[str, Any]) -> str:
    return "\n".join(b["text"] for b in result["content"] if b.get("type") == "text")


async def _client_run(
    cluster: Cluster, http: httpx2.AsyncClient, tenant: str, number: int, calls: int, tally: Tally
) -> None:
    client = Client(http, cluster.url, cluster.tokens[tenant])
    await client.open()
    tally.opened += 1
    if tally.opened >= tally.clients:
        tally.all_open.set()
    # The calls start once every client holds a session: a replica starts a backend per session, which
    # under load takes seconds, and the replica the test kills must die mid-session (a killed replica
    # still answering an initialize fails that client before it has a session to lose).
    await tally.all_open.wait()
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
    """A new session, as an MCP client opens one after losing its session or its connection: a try
    lost with its replica (HAProxy answers 502 for a request in flight on a killed replica, and may still
    send the next try there until its check, every 500 ms, marks it down) is tried again."""
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
    tally = Tally(clients=8)
    started = time.monotonic()
    with anyio.fail_after(90):
        async with httpx2.AsyncClient(timeout=20) as http, anyio.create_task_group() as tg:
            for number in range(tally.clients):
                tg.start_soon(_client_run, cluster, http, ("alice", "bob")[number % 2], number, 25, tally)
            while tally.calls < 70:
                await anyio.sleep(0.02)
            cluster.replicas[1].kill()  # r2 dies mid-session, with calls in flight
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


# -- 2026-07-28 clients, round-robined (HAProxy's X-Replica response header names the replica)


MODERN = "2026-07-28"


RAW: Any = TypeAdapter(dict[str, Any])


@pytest.fixture(scope="module")
def stateless_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    """A cluster of its own: the tests above stop and start its Redis."""
    with start_cluster(tmp_path_factory.mktemp("stateless")) as started:
        yield started


def _key(params: Any) -> str:
    return json.dumps([params.get("name"), params.get("arguments")], sort_keys=True)


class Modern:
    """An SDK client in 2026-07-28 mode; `replica[key]` names the replica that answered each tools/call."""

    def __init__(self, client: SdkClient) -> None:
        self.client = client
        self.replica: dict[str, str] = {}

    async def call(self, name: str, arguments: dict[str, Any]) -> tuple[dict[str, Any], str]:
        request = types.CallToolRequest(params=types.CallToolRequestParams(name=name, arguments=arguments))
        result: dict[str, Any] = await self.client.session.send_request(request, RAW)
        return result, self.replica.get(_key({"name": name, "arguments": arguments}), "")


@contextlib.asynccontextmanager
async def modern(url: str, token: str, conversation: str | None = None) -> AsyncIterator[Modern]:
    """`conversation`: the Mcpsqueeze-Conversation header (stateless calls are deduplicated only within
    a conversation the client names)."""
    box: list[Modern] = []

    async def seen(response: httpx2.Response) -> None:
        try:
            body = json.loads(response.request.content)
        except ValueError:
            return
        if isinstance(body, dict) and body.get("method") == "tools/call" and box:
            box[0].replica[_key(body.get("params") or {})] = response.headers.get("x-replica", "")

    headers = {"authorization": f"Bearer {token}"}
    if conversation is not None:
        headers["mcpsqueeze-conversation"] = conversation
    async with httpx2.AsyncClient(headers=headers, timeout=20, event_hooks={"response": [seen]}) as http:
        transport = streamable_http_client(url, http_client=http)
        async with SdkClient(transport, mode=MODERN) as client:
            assert client.protocol_version == MODERN
            box.append(Modern(client))
            yield box[0]


def _direct(cluster: Cluster, name: str) -> str:
    return f"http://127.0.0.1:{next(r.port for r in cluster.replicas if r.name == name)}/mcp"


@dataclass
class ModernShrunk:
    tenant: str
    key: str
    response_id: str
    by: str
    expected: str


@dataclass
class Run:
    calls: int = 0
    answered_by: Counter[str] = field(default_factory=Counter)
    per_client: dict[str, set[str]] = field(default_factory=dict)
    shrunk: list[ModernShrunk] = field(default_factory=list)
    mismatched: list[str] = field(default_factory=list)


async def _modern_run(cluster: Cluster, tenant: str, number: int, calls: int, run: Run) -> None:
    name = f"m-{tenant}-{number}"
    run.per_client[name] = set()
    async with modern(cluster.url, cluster.tokens[tenant]) as client:
        limit = anyio.Semaphore(3)

        async def one(i: int) -> None:
            async with limit:
                key = f"{name}-{i}"
                size = BIG if i % 4 else SMALL
                expected = page(key, size)
                result, replica = await client.call("page", {"key": key, "size": size})
                assert replica in cluster.live(), replica
                run.calls += 1
                run.answered_by[replica] += 1
                run.per_client[name].add(replica)
                truncation = (result.get("_meta") or {}).get("truncation")
                if truncation is None:
                    if _text(result) != expected:
                        run.mismatched.append(key)
                else:
                    run.shrunk.append(ModernShrunk(tenant, key, truncation["response_id"], replica, expected))

        async with anyio.create_task_group() as tg:
            for i in range(calls):
                tg.start_soon(one, i)


async def _recover_modern(client: Modern, item: ModernShrunk) -> tuple[str, str]:
    result, replica = await client.call("squeeze_recover", {"response_id": item.response_id})
    assert result.get("isError") is False, (item.key, result)
    return _text(result), replica


async def test_2026_clients_are_round_robined_over_the_replicas_and_recover_through_other_replicas(
    stateless_cluster: Cluster,
) -> None:
    cluster = stateless_cluster
    run = Run()
    with anyio.fail_after(60):
        async with anyio.create_task_group() as tg:
            for number in range(4):
                tg.start_soon(_modern_run, cluster, ("alice", "bob")[number % 2], number, 15, run)
    assert run.calls == 60 and run.mismatched == []
    assert len(run.shrunk) == 60 - 4 * 4  # calls 0, 4, 8, 12 of each client are small and pass unchanged
    # no session, no stickiness: every replica answered, and each client's calls spread over replicas
    assert set(run.answered_by) == {"r1", "r2", "r3"}, run.answered_by
    assert min(run.answered_by.values()) >= 5, run.answered_by
    assert all(len(replicas) >= 2 for replicas in run.per_client.values()), run.per_client

    with anyio.fail_after(60):
        # through the front: round robin sends many recoveries to another replica than the shrinking one
        elsewhere = 0
        for tenant in ("alice", "bob"):
            async with modern(cluster.url, cluster.tokens[tenant]) as client:
                for item in random.sample([s for s in run.shrunk if s.tenant == tenant], k=22):
                    got, replica = await _recover_modern(client, item)
                    assert got == item.expected, item.key
                    elsewhere += replica != item.by
        assert elsewhere >= len(run.shrunk) // 4, (elsewhere, len(run.shrunk))  # 2/3 expected
        # straight to a replica's own port: every shrunk result recovered by one that did not shrink it
        for tenant in ("alice", "bob"):
            for via in ("r1", "r2", "r3"):
                async with modern(_direct(cluster, via), cluster.tokens[tenant]) as client:
                    for item in (s for s in run.shrunk if s.tenant == tenant and s.by != via):
                        got, _ = await _recover_modern(client, item)
                        assert got == item.expected, item.key
    print(
        f"\n60 stateless calls answered by {dict(run.answered_by)}; {elsewhere}/{len(run.shrunk)} recovered elsewhere"
    )


async def test_on_the_stateless_path_one_tenant_cannot_recover_or_be_deduplicated_against_another(
    stateless_cluster: Cluster,
) -> None:
    cluster = stateless_cluster
    with anyio.fail_after(60):
        run = Run()
        await _modern_run(cluster, "alice", 9, 4, run)
        alices = run.shrunk
        assert len(alices) == 3
        for via in ("r1", "r2", "r3"):
            async with modern(_direct(cluster, via), cluster.tokens["bob"], "bob-c") as bob:
                for item in alices:
                    result, _ = await bob.call("squeeze_recover", {"response_id": item.response_id})
                    assert result.get("isError") is True, result
                    assert item.expected[:50] not in _text(result)
                    # the same call by bob is his own result, recoverable by him alone: never deduplicated
                    # against alice's, and deduplicated against his own first one in his conversation (made
                    # on r1): the conversation's index is shared by the replicas
                    again, _ = await bob.call("page", {"key": item.key, "size": BIG})
                    assert ("identical to the result of call" in _text(again)) == (via != "r1"), again
                    truncation = (again.get("_meta") or {})["truncation"]
                    assert truncation["response_id"] != item.response_id
                    got, _ = await _recover_modern(
                        bob, ModernShrunk("bob", item.key, truncation["response_id"], via, "")
                    )
                    assert got == item.expected
            async with modern(_direct(cluster, via), cluster.tokens["alice"], "alice-c") as alice:
                for item in alices:
                    got, _ = await _recover_modern(alice, item)
                    assert got == item.expected
                    # alice repeating her own call in her conversation, on any replica, is deduplicated
                    # after its first time there (her earlier calls named no conversation: not indexed)
                    repeated, _ = await alice.call("page", {"key": item.key, "size": BIG})
                    assert ("identical to the result of call" in _text(repeated)) == (via != "r1"), repeated


async def test_session_clients_and_2026_clients_share_the_replicas_and_recover_each_others_shrinks(
    stateless_cluster: Cluster,
) -> None:
    cluster = stateless_cluster
    run, tally = Run(), Tally()
    with anyio.fail_after(60):
        async with httpx2.AsyncClient(timeout=20) as http, anyio.create_task_group() as tg:
            for number in range(4):
                tenant = ("alice", "bob")[number % 2]
                tg.start_soon(_modern_run, cluster, tenant, 20 + number, 10, run)
                tg.start_soon(_client_run, cluster, http, tenant, 20 + number, 10, tally)
    assert run.calls == 40 and tally.calls == 40
    assert run.mismatched == [] and tally.mismatched == []
    assert tally.reconnects == 0  # the sessions stayed on their replicas among round-robined requests
    assert len(run.shrunk) == 40 - 4 * 3 and len(tally.shrunk) == 40 - 4 * 3
    assert set(run.answered_by) == {"r1", "r2", "r3"}, run.answered_by
    with anyio.fail_after(60):
        # a 2026-07-28 client on another replica recovers what the session clients' replicas shrank
        for tenant in ("alice", "bob"):
            for via in ("r1", "r2", "r3"):
                async with modern(_direct(cluster, via), cluster.tokens[tenant]) as client:
                    for session_item in (s for s in tally.shrunk if s.tenant == tenant and s.by != via):
                        result, _ = await client.call(
                            "squeeze_recover", {"response_id": session_item.response_id}
                        )
                        assert result.get("isError") is False, result
                        assert _text(result) == session_item.expected
                    for item in (s for s in run.shrunk if s.tenant == tenant and s.by != via):
                        got, _ = await _recover_modern(client, item)
                        assert got == item.expected


LEDGER = [sys.executable, str(Path(__file__).parents[1] / "fixtures" / "ledger_server.py")]


async def _full(client: Modern, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """A plain tools/call asking for `full` (`_meta["mcpsqueeze/full"]`)."""
    params = types.CallToolRequestParams.model_validate(
        {"name": name, "arguments": arguments, "_meta": {"mcpsqueeze/full": True}}
    )
    result: dict[str, Any] = await client.client.session.send_request(
        types.CallToolRequest(params=params), RAW
    )
    return result


async def test_full_through_another_replica_answers_with_the_original_and_never_runs_the_tool(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ledger = tmp_path / "ledger.txt"
    monkeypatch.setenv("LEDGER_FILE", str(ledger))  # the replicas' backends count their calls there
    redis = RedisServer(tmp_path)
    redis.start()
    try:
        tokens, token_file = write_tokens(tmp_path)
        with start_replicas(tmp_path, redis, token_file, ("r1", "r2"), LEDGER) as replicas:
            r1, r2 = (f"http://127.0.0.1:{r.port}/mcp" for r in replicas)
            expected = rows_text(600, "replicas", 1)
            async with modern(r1, tokens["alice"], "conv") as on_r1:
                shrunk, _ = await on_r1.call("write_rows", {"n": 600, "tag": "replicas"})
            assert len(_text(shrunk)) < len(expected)
            async with modern(r2, tokens["alice"], "conv") as on_r2:
                original = await _full(on_r2, "write_rows", {"tag": "replicas", "n": 600})
            assert original.get("isError") is not True and _text(original) == expected
            for token, conversation in ((tokens["bob"], "conv"), (tokens["alice"], "another")):
                async with modern(r2, token, conversation) as elsewhere:
                    refused = await _full(elsewhere, "write_rows", {"n": 600, "tag": "replicas"})
                assert refused["isError"] is True and "holds no original of that call" in _text(refused)
            assert calls_of("write_rows", "replicas", ledger) == 1  # full never ran the write again
    finally:
        redis.stop()
