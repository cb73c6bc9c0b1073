"""Deterministic fake data for the demo server: same arguments, same bytes, on every run and machine.

Every generator seeds its own `random.Random` from a string (string seeds are hashed with SHA-512 by
`random`, independent of `PYTHONHASHSEED`), so nothing depends on process state.
"""

from __future__ import annotations

import random
import zlib
from datetime import UTC, datetime, timedelta
from typing import Any

_LOREM = (
    "lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor incididunt ut "
    "labore et dolore magna aliqua enim ad minim veniam quis nostrud exercitation ullamco "
    "laboris nisi aliquip ex ea commodo consequat duis aute irure in reprehenderit voluptate "
    "velit esse cillum fugiat nulla pariatur excepteur sint occaecat cupidatat non proident "
    "sunt culpa qui officia deserunt mollit anim id est laborum proxy cache token stream buffer "
    "request response latency timeout retry schema payload handler "
)
_WORDS = tuple(_LOREM.split())
_LABELS = (
    "bug",
    "enhancement",
    "docs",
    "performance",
    "security",
    "good first issue",
    "wontfix",
    "regression",
)
_USERS = ("alice", "bob", "carol", "dmitri", "erin", "farah", "gus", "hiro", "ines", "jun")
_EPOCH = datetime(2024, 1, 1, tzinfo=UTC)


def _rng(*parts: object) -> random.Random:
    return random.Random("\x1f".join(str(p) for p in parts))


def _sentence(rng: random.Random, lo: int = 6, hi: int = 16) -> str:
    words = [rng.choice(_WORDS) for _ in range(rng.randint(lo, hi))]
    return " ".join(words).capitalize() + "."


def _timestamp(rng: random.Random) -> str:
    moment = _EPOCH + timedelta(seconds=rng.randint(0, 86400 * 700))
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def _markdown_body(rng: random.Random) -> str:
    """A GitHub-style issue body of 400 to about 700 characters, ending in a fenced error line."""
    target = rng.randint(400, 460)
    head = ["### Description", _sentence(rng, 10, 20), "", "### Steps to reproduce"]
    tail = ["", "```", f"error: {rng.choice(_WORDS)} failed after {rng.randint(1, 999)} ms", "```"]
    steps: list[str] = []
    while len("\n".join(head + steps + tail)) < target:
        steps.append(f"{len(steps) + 1}. {_sentence(rng, 5, 12)}")
    return "\n".join(head + steps + tail)


def search_issues(query: str, limit: int) -> dict[str, Any]:
    """A GitHub-like search page; a few items carry extra keys (milestone, pull_request, ...)."""
    rng = _rng("issues", query, limit)
    issues: list[dict[str, Any]] = []
    for i in range(max(0, limit)):
        number = 1000 + i
        login = rng.choice(_USERS)
        issue: dict[str, Any] = {
            "id": 50_000_000 + rng.randint(0, 9_999_999),
            "key": f"DEMO-{number}",
            "number": number,
            "title": f"{query}: {_sentence(rng, 4, 9)[:-1]}",
            "state": rng.choice(("open", "open", "closed")),
            "labels": sorted(rng.sample(_LABELS, rng.randint(0, 3))),
            "assignee": {"login": login, "id": 1000 + _USERS.index(login)},
            "body": _markdown_body(rng),
            "created_at": _timestamp(rng),
            "updated_at": _timestamp(rng),
            "comments": rng.randint(0, 40),
        }
        if i % 37 == 5:
            issue["milestone"] = {
                "title": f"v{rng.randint(1, 3)}.{rng.randint(0, 9)}",
                "due_on": _timestamp(rng),
            }
        if i % 53 == 11:
            issue["pull_request"] = {
                "url": f"https://issues.example.com/demo/pulls/{number}",
                "merged": False,
            }
        if i % 71 == 23:
            issue["locked"] = True
            issue["lock_reason"] = "too heated"
        issues.append(issue)
    token = f"{zlib.crc32(f'{query}|{limit}'.encode()):08x}"
    return {"total_count": len(issues) * 7 + 3, "query": query, "issues": issues, "next_page_token": token}


def list_rows(table: str, n: int) -> list[dict[str, Any]]:
    """Near-identical rows, as a database dump would give: only id, timestamps and a score vary."""
    rng = _rng("rows", table, n)
    return [
        {
            "id": i + 1,
            "table": table,
            "status": "active" if i % 50 else "archived",
            "region": "eu-west-1",
            "owner": "svc-batch",
            "created_at": _timestamp(rng),
            "score": round(rng.random(), 4),
            "tags": ["imported", "v2"],
            "deleted": False,
        }
        for i in range(max(0, n))
    ]


def prose(path: str, size: int = 60_000) -> str:
    """Lorem-like paragraphs wrapped at about 80 columns, about `size` characters in all."""
    rng = _rng("prose", path)
    paragraphs: list[str] = [f"# {path}", ""]
    total = 0
    while total < size:
        words = " ".join(_sentence(rng) for _ in range(rng.randint(3, 8))).split()
        line = ""
        for word in words:
            if len(line) + len(word) + 1 > 80:
                paragraphs.append(line)
                total += len(line) + 1
                line = word
            else:
                line = f"{line} {word}" if line else word
        paragraphs += [line, ""]
        total += len(line) + 2
    return "\n".join(paragraphs)


def big_structured(n: int) -> dict[str, Any]:
    rng = _rng("structured", n)
    items = [
        {
            "sku": f"SKU-{i:05d}",
            "name": _sentence(rng, 2, 4)[:-1],
            "price": round(rng.uniform(1, 500), 2),
            "stock": rng.randint(0, 1000),
            "warehouse": rng.choice(("ams", "fra", "dub")),
            "description": _sentence(rng, 12, 30),
        }
        for i in range(max(0, n))
    ]
    return {"count": len(items), "items": items, "summary": {"warehouses": ["ams", "dub", "fra"]}}
