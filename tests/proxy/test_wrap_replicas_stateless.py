"""Replicas and 2026-07-28 clients: the SDK's own stateless client through the real HAProxy in front of
three `wrap --transport streamable-http` replicas sharing one real redis-server.

A 2026-07-28 request carries no Mcp-Session-Id, so HAProxy round-robins every request: one client's
calls land on all replicas, and its `squeeze_recover` usually reaches another replica than the one that
shrank the result. HAProxy's X-Replica response header (test config only) names the replica.
"""

from __future__ import annotations

import contextlib
import json
import random
from collections import Counter
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from typing import Any

import anyio
import httpx2
import mcp_types as types
import pytest
from mcp import Client as SdkClient
from mcp.client.streamable_http import streamable_http_client
from pydantic import TypeAdapter
from test_wrap_replicas import BIG, SMALL, Cluster, Tally, _client_run, _text, start_cluster

from fixtures.pages_backend import page
from realservers import needs_haproxy, needs_redis

pytestmark = [needs_redis, needs_haproxy, pytest.mark.anyio]

MODERN = "2026-07-28"
RAW: Any = TypeAdapter(dict[str, Any])


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
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
class Shrunk:
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
    shrunk: list[Shrunk] = field(default_factory=list)
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
                    run.shrunk.append(Shrunk(tenant, key, truncation["response_id"], replica, expected))

        async with anyio.create_task_group() as tg:
            for i in range(calls):
                tg.start_soon(one, i)


async def _recover(client: Modern, item: Shrunk) -> tuple[str, str]:
    result, replica = await client.call("squeeze_recover", {"response_id": item.response_id})
    assert result.get("isError") is False, (item.key, result)
    return _text(result), replica


async def test_2026_clients_are_round_robined_over_the_replicas_and_recover_through_other_replicas(
    cluster: Cluster,
) -> None:
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
                    got, replica = await _recover(client, item)
                    assert got == item.expected, item.key
                    elsewhere += replica != item.by
        assert elsewhere >= len(run.shrunk) // 4, (elsewhere, len(run.shrunk))  # 2/3 expected
        # straight to a replica's own port: every shrunk result recovered by one that did not shrink it
        for tenant in ("alice", "bob"):
            for via in ("r1", "r2", "r3"):
                async with modern(_direct(cluster, via), cluster.tokens[tenant]) as client:
                    for item in (s for s in run.shrunk if s.tenant == tenant and s.by != via):
                        got, _ = await _recover(client, item)
                        assert got == item.expected, item.key
    print(
        f"\n60 stateless calls answered by {dict(run.answered_by)}; {elsewhere}/{len(run.shrunk)} recovered elsewhere"
    )


async def test_on_the_stateless_path_one_tenant_cannot_recover_or_be_deduplicated_against_another(
    cluster: Cluster,
) -> None:
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
                    got, _ = await _recover(bob, Shrunk("bob", item.key, truncation["response_id"], via, ""))
                    assert got == item.expected
            async with modern(_direct(cluster, via), cluster.tokens["alice"], "alice-c") as alice:
                for item in alices:
                    got, _ = await _recover(alice, item)
                    assert got == item.expected
                    # alice repeating her own call in her conversation, on any replica, is deduplicated
                    # after its first time there (her earlier calls named no conversation: not indexed)
                    repeated, _ = await alice.call("page", {"key": item.key, "size": BIG})
                    assert ("identical to the result of call" in _text(repeated)) == (via != "r1"), repeated


async def test_session_clients_and_2026_clients_share_the_replicas_and_recover_each_others_shrinks(
    cluster: Cluster,
) -> None:
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
                        got, _ = await _recover(client, item)
                        assert got == item.expected
