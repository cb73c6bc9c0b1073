"""A dedup pointer only ever names a result this same conversation was shown.

2026-07-28 clients send no session, so one dedup index for every stateless call of a principal would
answer an unrelated client's first and only call with "identical to the result of call #1", a result it
never saw. Stateless calls are deduplicated only within a conversation the client names
(`_meta["mcpsqueeze/conversation"]` or the `Mcpsqueeze-Conversation` header); without one, results are
shown (and still shrunk), never a pointer. wrap runs in this process (memwrap.HttpWrap).
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx2
import mcp_types as types
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from pydantic import TypeAdapter

from memwrap import HttpWrap
from rawclient import text

RAW: Any = TypeAdapter(dict[str, Any])
MODERN = "2026-07-28"
SAME = "a result two unrelated clients both fetch, long enough that a pointer would be shorter. " * 20
POINTER = "identical to the result of call"


@contextlib.contextmanager
def _proxy(tmp_path: Path) -> Iterator[str]:
    """wrap's HTTP frontend in front of the demo server: its URL."""
    with HttpWrap(
        ["--recovery-dir", str(tmp_path / "rec")], [sys.executable, "-m", "mcpsqueeze.demo.server"]
    ) as wrap:
        yield wrap.url


@contextlib.asynccontextmanager
async def _client(url: str, headers: dict[str, str] | None = None) -> AsyncIterator[Client]:
    async with (
        httpx2.AsyncClient(headers=headers or {}, timeout=30) as http,
        Client(streamable_http_client(url, http_client=http), mode=MODERN) as client,
    ):
        assert client.protocol_version == MODERN
        yield client


async def _echo(client: Client, meta: dict[str, Any] | None = None) -> str:
    params = types.CallToolRequestParams(name="echo", arguments={"text": SAME}, _meta=meta)
    result: dict[str, Any] = await client.session.send_request(types.CallToolRequest(params=params), RAW)
    return text(result)


@pytest.mark.anyio
async def test_an_unrelated_stateless_client_never_gets_a_pointer_to_a_result_it_never_saw(
    tmp_path: Path,
) -> None:
    with _proxy(tmp_path) as url:
        async with _client(url) as first:
            assert await _echo(first) == SAME
            assert await _echo(first) == SAME  # no conversation named: never a pointer
        async with _client(url) as second:
            assert await _echo(second) == SAME  # its first and only call: the result itself


@pytest.mark.anyio
async def test_within_a_named_conversation_repeats_are_still_deduplicated(tmp_path: Path) -> None:
    with _proxy(tmp_path) as url:
        async with _client(url, {"Mcpsqueeze-Conversation": "conv-header-1"}) as by_header:
            assert await _echo(by_header) == SAME
            assert POINTER in await _echo(by_header)
        async with _client(url) as by_meta:
            meta = {"mcpsqueeze/conversation": "conv-meta-2"}
            assert await _echo(by_meta, meta) == SAME  # another conversation: its own first sighting
            assert POINTER in await _echo(by_meta, meta)
            assert await _echo(by_meta) == SAME  # outside any conversation: shown
        async with _client(url, {"Mcpsqueeze-Conversation": "conv-header-1"}) as resumed:
            assert POINTER in await _echo(resumed)  # the same conversation, a new connection
