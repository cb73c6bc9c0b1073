"""The library doors (`Squeezer`, `shrink_tools`, `Client`) check every keyword by its
row of the table of settings: nan, inf, 0 workers, a string budget are a UsageError naming the keyword
(never accepted, never a TypeError); a 5,000-deep structuredContent never raises out of `present`."""

from __future__ import annotations

import math
import sys
from typing import Any

import pytest

from mcpsqueeze import Client, Squeezer, UsageError, shrink_tools

pytestmark = pytest.mark.anyio

NAN, INF = math.nan, math.inf
BAD: list[tuple[str, Any]] = [
    ("budget", NAN), ("budget", INF), ("budget", "abc"), ("budget", 9000.5), ("budget", 10), ("budget", True),
    ("cache_bytes", NAN), ("cache_bytes", INF), ("cache_bytes", -1), ("cache_bytes", "lots"),
    ("cache_entries", 0), ("cache_entries", NAN), ("cache_ttl", NAN), ("cache_ttl", -5), ("cache_ttl", INF),
    ("jobs", 0), ("jobs", -2), ("jobs", 2.5), ("truncate_chars", NAN), ("truncate_chars", 10),
    ("shrink_above", NAN), ("shrink_above", -1), ("shrink", "yes"), ("dedup", 1), ("recovery", "disk"),
]  # fmt: skip


def _doors(key: str, value: Any) -> list[Any]:
    servers = {"x": {"command": sys.executable, "args": ["-c", ""]}}
    return [
        lambda: Squeezer(**{key: value}),
        lambda: shrink_tools([], **{key: value}),
        lambda: Client(servers, config=False, **{key: value}),
    ]


@pytest.mark.parametrize(("key", "value"), BAD)
def test_bad_numbers_are_a_usage_error_naming_the_keyword(key: str, value: Any) -> None:
    for door in _doors(key, value):
        with pytest.raises(UsageError, match=key):
            door()


def test_an_unknown_keyword_is_a_usage_error_with_a_suggestion() -> None:
    with pytest.raises(UsageError, match="did you mean 'budget'"):
        Squeezer(budgte=4000)
    with pytest.raises(UsageError, match="timeout"):
        Squeezer(timeout=5)  # a squeezer calls no backend: the Client's keyword only


def test_good_values_still_work() -> None:
    squeezer = Squeezer(4000, cache_bytes="8M", cache_ttl="10m", jobs=2, truncate_chars=0, shrink_above=False)
    policy = squeezer.settings.policy
    assert (policy.budget, policy.truncate_chars, policy.shrink_above) == (4000, None, None)
    assert (squeezer.settings.cache_bytes, squeezer.settings.cache_ttl) == (8 * 1024**2, 600.0)
    squeezer.close()


def _deep(levels: int) -> dict[str, Any]:
    root: dict[str, Any] = {}
    node = root
    for _ in range(levels):
        node["a"] = {}
        node = node["a"]
    return root


@pytest.mark.parametrize("text", ["small", "x" * 50_000])
async def test_deep_structured_content_never_raises_out_of_present(text: str) -> None:
    squeezer = Squeezer(budget=2000)
    result = {"content": [{"type": "text", "text": text}], "structuredContent": _deep(5000)}
    for _ in range(2):  # the second is a repeat: dedup sees it too
        presented = await squeezer.present("s", "t", {}, result)
        assert (
            presented["structuredContent"] is result["structuredContent"] or "structuredContent" in presented
        )
    squeezer.close()
