"""A bounded loopback load test of `wrap`'s HTTP frontend (in process): 200 concurrent calls over 4 sessions.

Invariants: every call answered (0 lost), each with its own answer (0 mismatched), and every shrunk
result recovered byte for byte through squeeze_recover. Figures are printed, never asserted on time.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import Client
from pydantic import TypeAdapter

from mcpsqueeze.demo import _data
from memwrap import HttpWrap
from rawclient import demo_server, text

RAW: Any = TypeAdapter(dict[str, Any])
SESSIONS = 4
CALLS_PER_SESSION = 50
BIG_EVERY = 10  # every 10th call is a large result that gets shrunk


async def _call(client: Client, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    request = types.CallToolRequest(params=types.CallToolRequestParams(name=name, arguments=arguments))
    result: dict[str, Any] = await client.session.send_request(request, RAW)
    return result


def _expected_big(query: str) -> str:
    return json.dumps(_data.search_issues(query, 300), ensure_ascii=False)


@pytest.mark.anyio
async def test_200_concurrent_calls_through_the_http_frontend_lose_and_mix_up_nothing(tmp_path: Path) -> None:
    tally = {"tried": 0, "answered": 0, "mismatched": 0, "shrunk": 0, "recovered": 0, "lost": 0}

    async def one(client: Client, session: int, i: int) -> None:
        tally["tried"] += 1
        tag = f"s{session}-c{i}"
        try:
            if i % BIG_EVERY == 0:
                got = await _call(client, "search_issues", {"query": tag})
                tally["answered"] += 1
                meta = (got.get("_meta") or {}).get("truncation")
                if meta is None or json.loads(text(got)).get("query") != tag:  # shrunk, and its own
                    tally["mismatched"] += 1
                    return
                tally["shrunk"] += 1
                back = await _call(client, "squeeze_recover", {"response_id": meta["response_id"]})
                if text(back) == _expected_big(tag):
                    tally["recovered"] += 1
                else:
                    tally["mismatched"] += 1
            else:
                got = await _call(client, "echo", {"text": tag})
                tally["answered"] += 1
                tally["mismatched"] += text(got) != tag
        except Exception:
            tally["lost"] += 1

    async def session(url: str, n: int) -> None:
        async with Client(url, mode="legacy") as client, anyio.create_task_group() as tg:
            for i in range(CALLS_PER_SESSION):
                tg.start_soon(one, client, n, i)

    started = time.perf_counter()
    options = [
        "--recovery-dir",
        str(tmp_path / "rec"),
        "--max-sessions",
        str(SESSIONS),
        "--page-size",
        "100000000",
    ]
    with HttpWrap(options, demo_server()) as door:
        url = door.url
        with anyio.fail_after(120):
            async with anyio.create_task_group() as tg:
                for n in range(SESSIONS):
                    tg.start_soon(session, url, n)
    took = time.perf_counter() - started
    print(f"\nwrap HTTP load: {tally} in {took:.1f} s")
    assert tally["tried"] == SESSIONS * CALLS_PER_SESSION == 200
    assert tally["lost"] == 0 and tally["mismatched"] == 0
    assert tally["answered"] == 200
    assert tally["shrunk"] == tally["recovered"] == 200 // BIG_EVERY
