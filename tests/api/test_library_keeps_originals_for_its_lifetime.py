"""`shrink_tools`, `Squeezer` and `Client` keep originals for the object's lifetime by
default (bounded by entries and bytes), not 5 minutes; a TTL applies only when asked for; an evicted id's
error says why (the bound that evicted it)."""

from __future__ import annotations

import json
import sys
import time

import pytest

from mcpsqueeze import Client, RecoveryError, Squeezer, shrink_tools

pytestmark = [pytest.mark.anyio, pytest.mark.fuzz]


def _big(tag: str) -> dict[str, object]:
    return {
        "content": [
            {"type": "text", "text": json.dumps([{"id": i, "tag": tag, "x": "y" * 60} for i in range(400)])}
        ]
    }


def test_library_doors_keep_originals_without_a_ttl_by_default() -> None:
    servers = {"x": {"command": sys.executable, "args": ["-c", ""]}}
    doors = [Squeezer(), shrink_tools([]).squeezer, Client(servers, config=False).squeezer]
    for squeezer in doors:
        assert (
            squeezer.settings.cache_ttl is None
        )  # no TTL: the object's lifetime, entries and bytes bound it
        memory = squeezer.services.store.memory  # type: ignore[union-attr]
        assert memory.ttl == float("inf") and memory.max_entries == 128 and memory.max_bytes == 64 * 1024**2
        squeezer.close()


async def test_an_original_outlives_five_minutes(monkeypatch: pytest.MonkeyPatch) -> None:
    squeezer = Squeezer(budget=2000)
    presented = await squeezer.present("s", "t", {}, _big("a"))
    response_id = presented["_meta"]["truncation"]["response_id"]
    later = time.monotonic() + 3600  # an hour on: the old 300 s default would have expired it
    memory = squeezer.services.store.memory  # type: ignore[union-attr]
    monkeypatch.setattr(memory, "_clock", lambda: later)
    assert json.loads(squeezer.recover(response_id))[0]["tag"] == "a"
    squeezer.close()


async def test_a_ttl_applies_when_asked_for() -> None:
    squeezer = Squeezer(budget=2000, cache_ttl=0.05)
    presented = await squeezer.present("s", "t", {}, _big("a"))
    response_id = presented["_meta"]["truncation"]["response_id"]
    time.sleep(0.1)
    with pytest.raises(RecoveryError, match="expired"):
        squeezer.recover(response_id)
    squeezer.close()


async def test_an_evicted_id_says_which_bound_evicted_it() -> None:
    squeezer = Squeezer(budget=2000, cache_entries=2, dedup=False)
    ids = []
    for tag in "abc":
        presented = await squeezer.present("s", "t", {}, _big(tag))
        ids.append(presented["_meta"]["truncation"]["response_id"])
    with pytest.raises(RecoveryError, match=r"evicted .*at most 2 results.*cache_entries"):
        squeezer.recover(ids[0])
    assert json.loads(squeezer.recover(ids[2]))[0]["tag"] == "c"
    squeezer.close()
