"""JSON record lists: tickets, paged users, search results, hosts, events and orders, each with one
record that differs from its siblings (a note, a key no other has, a message, a value seen once)."""

from __future__ import annotations

import json
import random
from collections.abc import Callable

from ._facts import Fact, sentence_fact
from ._words import CITIES, COMPANIES, FIRST, LAST, Lexicon, code, person

__all__ = ["RECORDS"]

Output = tuple[str, dict[str, object], Fact]


class _Style:
    """How one server writes its JSON: compact, spaced, or indented (drawn once per output)."""

    def __init__(self, rng: random.Random) -> None:
        self.kind = rng.randrange(3)
        self.target = rng.randrange(20_000, 28_000)

    def dumps(self, value: object) -> str:
        if self.kind == 0:
            return json.dumps(value, separators=(",", ":"))
        return json.dumps(value, indent=2 if self.kind == 2 else None)

    def fill(self, make: Callable[[int], dict[str, object]], less: int = 0) -> list[dict[str, object]]:
        """Records from ``make`` until they are about the target size as written."""
        items: list[dict[str, object]] = []
        size = 0
        while size < self.target - less:
            item = make(len(items))
            items.append(item)
            size += len(self.dumps([item]))
        return items


_NOTES = [
    "Queue cleared after restart of the worker pool.",
    "Waiting on customer reply.",
    "Duplicate of an earlier report, closing.",
    "Fixed in the last deploy, monitoring.",
    "Needs reproduction steps.",
]


def tickets(rng: random.Random) -> Output:
    """A bare array of flat tickets; every note is one of a few stock phrases but one."""
    style = _Style(rng)
    contact, ext = person(rng), code(rng, "x9999")
    fact = Fact(
        f"{contact} from procurement asked to be called back on extension {ext} before Friday.",
        "Which extension did the person from procurement ask to be called back on?",
        ext,
    )
    statuses = ("open", "closed", "in_progress", "closed", "closed")
    items = style.fill(
        lambda i: {
            "id": f"OPS-{4100 + i}",
            "title": rng.choice(
                (
                    "Disk alert on batch host",
                    "Login slow",
                    "Report export fails",
                    "VPN drops",
                    "Printer offline",
                    "Password reset",
                )
            ),
            "status": rng.choice(statuses),
            "priority": rng.choice(("low", "medium", "high")),
            "assignee": person(rng),
            "created_at": f"2026-0{rng.randrange(1, 4)}-{rng.randrange(1, 28):02d}T{rng.randrange(24):02d}:{rng.randrange(60):02d}:00Z",
            "note": rng.choice(_NOTES),
        }
    )
    rng.choice(items[len(items) // 10 :])["note"] = fact.sentence
    return style.dumps(items), {"project": "OPS", "limit": len(items)}, fact


def users(rng: random.Random) -> Output:
    """A page object around nested user records; one record has a key no other has."""
    style = _Style(rng)
    invoice = code(rng, "INV-99999")
    fact = Fact(
        f"chargeback dispute over invoice {invoice}",
        "Which invoice's chargeback dispute caused an account suspension?",
        invoice,
    )
    plans = ("free", "pro", "team", "enterprise")

    def make(i: int) -> dict[str, object]:
        first, last = rng.choice(FIRST), rng.choice(LAST)
        return {
            "id": 70000 + i * 7,
            "username": f"{first.lower()}.{last.lower()}{rng.randrange(99)}",
            "email": f"{first.lower()}@{rng.choice(COMPANIES).lower()}.example",
            "profile": {
                "city": rng.choice(CITIES),
                "plan": rng.choice(plans),
                "joined": f"20{rng.randrange(15, 26)}-0{rng.randrange(1, 9)}-1{rng.randrange(9)}",
            },
            "tags": rng.sample(["beta", "vip", "trial", "churn-risk", "partner", "edu"], rng.randrange(0, 3)),
            "active": rng.random() < 0.9,
        }

    items = style.fill(make, 200)
    odd = rng.choice(items[5:])
    odd["active"] = False
    odd["suspension_reason"] = fact.sentence
    page = {
        "page": 3,
        "per_page": len(items),
        "total": len(items) * 7,
        "data": items,
        "next": "/v2/users?page=4",
    }
    return style.dumps(page), {"endpoint": "/v2/users", "page": 3}, fact


def search_results(rng: random.Random) -> Output:
    """Search hits with prose snippets; one snippet holds the fact."""
    style = _Style(rng)
    fact = sentence_fact(rng)
    lex = Lexicon(rng.choice(("operations", "finance", "history")), rng)
    topic = " ".join(w for w in fact.question.rstrip("?").split()[-3:] if len(w) > 3)

    def make(i: int) -> dict[str, object]:
        title = f"{lex.phrase(rng).capitalize()}"
        if rng.random() < 0.3:
            title += f" ({topic})"
        return {
            "rank": i + 1,
            "title": title,
            "url": f"https://intranet.example/{lex.noun(rng)}/{rng.randrange(10**5)}",
            "snippet": " ".join(lex.paragraph(rng, rng.randrange(2, 4))),
            "score": round(1 / (i + 1.5), 4),
        }

    items = style.fill(make)
    hit = rng.choice(items[2:])
    sentences = str(hit["snippet"]).split(". ")
    sentences.insert(rng.randrange(len(sentences)), fact.sentence.rstrip("."))
    hit["snippet"] = ". ".join(sentences)
    return style.dumps({"query": topic, "total": len(items), "results": items}), {"query": topic}, fact


def hosts(rng: random.Random) -> Output:
    """Host inventory with stock comments; one comment tells a story the others do not."""
    style = _Style(rng)
    address = f"203.0.113.{rng.randrange(2, 250)}"
    fact = Fact(
        f"quarantined after beaconing to {address} over port 8443",
        "Which address was the quarantined host beaconing to?",
        address,
    )
    comments = ("", "", "patched", "rebooted for kernel update", "disk replaced", "")

    def make(i: int) -> dict[str, object]:
        return {
            "hostname": f"{rng.choice(('web', 'db', 'cache', 'batch'))}-{i:03d}.{rng.choice(('fra1', 'ams3', 'lon2'))}",
            "ip": f"10.{rng.randrange(4)}.{rng.randrange(256)}.{rng.randrange(256)}",
            "os": rng.choice(("ubuntu-22.04", "ubuntu-24.04", "debian-12")),
            "cpu": rng.choice((2, 4, 8, 16)),
            "mem_gb": rng.choice((4, 8, 16, 32, 64)),
            "uptime_days": rng.randrange(1, 400),
            "status": rng.choice(("active", "active", "active", "draining")),
            "comment": rng.choice(comments),
        }

    items = style.fill(make)
    odd = rng.choice(items[3:-3])
    odd["status"] = "quarantined"
    odd["comment"] = fact.sentence
    return style.dumps({"hosts": items, "count": len(items)}), {"fleet": "prod"}, fact


def events(rng: random.Random) -> Output:
    """Log events as objects; several ordinary warnings, one error with the fact."""
    style = _Style(rng)
    job, pid = rng.choice(("settlement", "payout", "ledger-close")), rng.randrange(1000, 65000)
    fact = Fact(
        f"{job} job aborted: lock held by pid {pid} on batch-0{rng.randrange(1, 9)}",
        f"Which pid held the lock when the {job} job aborted?",
        str(pid),
    )
    messages = (
        "request completed",
        "cache hit ratio computed",
        "session refreshed",
        "heartbeat ok",
        "upstream latency above target",
        "retrying request",
    )

    def make(i: int) -> dict[str, object]:
        msg = rng.choice(messages)
        return {
            "ts": f"2026-03-02T{i // 3600 % 24:02d}:{i // 60 % 60:02d}:{i % 60:02d}.{rng.randrange(1000):03d}Z",
            "level": "warn" if msg.startswith(("upstream", "retrying")) else "info",
            "service": rng.choice(("api", "worker", "scheduler")),
            "message": msg,
            "duration_ms": rng.randrange(2, 900),
        }

    items = style.fill(make)
    odd = rng.choice(items[10:-10])
    odd["level"], odd["message"] = "error", fact.sentence
    return style.dumps({"events": items}), {"service": "all", "since": "24h"}, fact


def orders(rng: random.Random) -> Output:
    """Orders with nested line items; one order's status is a phrase no other order has."""
    style = _Style(rng)
    city = rng.choice(("Hamburg", "Rotterdam", "Antwerp", "Gdansk"))
    broker = code(rng, "BRK-999")
    fact = Fact(
        f"on hold: customs papers from {city} missing, broker {broker}",
        f"Which broker handles the order on hold for missing customs papers from {city}?",
        broker,
    )

    def make(i: int) -> dict[str, object]:
        return {
            "order": f"SO-{200000 + i * 13}",
            "customer": rng.choice(COMPANIES),
            "lines": [
                {
                    "sku": f"SKU-{rng.randrange(1000, 9999)}",
                    "qty": rng.randrange(1, 20),
                    "price": round(rng.uniform(2, 300), 2),
                }
                for _ in range(rng.randrange(1, 4))
            ],
            "status": rng.choice(("shipped", "shipped", "pending", "delivered")),
            "placed": f"2026-02-{rng.randrange(1, 28):02d}",
        }

    items = style.fill(make)
    rng.choice(items[4:])["status"] = fact.sentence
    return style.dumps(items), {"customer": "all", "month": "2026-02"}, fact


def readings(rng: random.Random) -> Output:
    """Sensor records of numbers and a stock label; one has a number far out of range and its own label."""
    style = _Style(rng)
    value = round(rng.uniform(380, 480), 1)
    fact = Fact(
        f"kiln annex probe out of calibration range at {int(value)} degC",
        "At what temperature did the kiln annex probe go out of calibration range?",
        f"{int(value)} degC",
    )
    places = ("lab A", "lab B", "cold room", "office", "hallway", "server room")

    def make(i: int) -> dict[str, object]:
        return {
            "sensor": f"S-{100 + i % 60}",
            "place": rng.choice(places),
            "t": 1772400000 + i * 60,
            "temp_c": round(rng.uniform(18, 27), 1),
            "rh": rng.randrange(30, 60),
            "label": "nominal",
        }

    items = style.fill(make)
    odd = rng.choice(items[5:-5])
    odd["temp_c"], odd["label"] = value, fact.sentence
    return style.dumps({"readings": items}), {"site": "plant-2", "window": "6h"}, fact


RECORDS: list[Callable[[random.Random], Output]] = [
    tickets,
    users,
    search_results,
    hosts,
    events,
    orders,
    readings,
]
