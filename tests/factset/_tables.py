"""CSV/TSV tables: orders with notes, sensor readings, staff, an inventory (TSV) and payments with quoted
memos, each with one row that stands out (a note, a category seen once, a number out of range)."""

from __future__ import annotations

import csv
import io
import random
from collections.abc import Callable, Sequence

from ._facts import Fact
from ._words import CITIES, COMPANIES, FIRST, LAST, Lexicon, code, person

__all__ = ["TABLES"]

Output = tuple[str, dict[str, object], Fact]


def _target(rng: random.Random) -> int:
    return rng.randrange(20_000, 29_000)


def _table(
    rng: random.Random,
    header: list[str],
    make: Callable[[int], list[object]],
    odd: Sequence[object],
    delimiter: str = ",",
) -> str:
    rows: list[list[object]] = []
    size, target = 0, _target(rng)
    while size < target:
        row = make(len(rows))
        rows.append(row)
        size += sum(len(str(c)) + 1 for c in row)
    rows[rng.randrange(len(rows) // 10, len(rows) - len(rows) // 10)] = list(odd)
    out = io.StringIO()
    writer = csv.writer(out, delimiter=delimiter, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(rows)
    return out.getvalue()


def orders(rng: random.Random) -> Output:
    gate = code(rng, "Gate A99")
    question, answer = "At which gate should the courier leave the parcel for the night porter?", gate
    notes = ("", "", "", "leave at door", "gift wrap", "call on arrival", "")

    def make(i: int) -> list[object]:
        return [
            10000 + i,
            f"2026-02-{rng.randrange(1, 29):02d}",
            person(rng),
            rng.choice(("EU", "US", "APAC")),
            f"SKU-{rng.randrange(100, 999)}",
            rng.randrange(1, 9),
            f"{rng.uniform(3, 250):.2f}",
            rng.choice(("shipped", "delivered", "pending")),
            rng.choice(notes),
        ]

    odd = [
        10000 + rng.randrange(50, 300),
        "2026-02-14",
        person(rng),
        "EU",
        "SKU-512",
        1,
        "89.00",
        "pending",
        f"courier to leave parcel with the night porter at {gate}",
    ]
    header = ["order_id", "date", "customer", "region", "sku", "qty", "price", "status", "note"]
    return (
        _table(rng, header, make, odd),
        {"path": "exports/orders-2026-02.csv"},
        Fact(",".join(map(str, odd)), question, answer),
    )


def sensors(rng: random.Random) -> Output:
    value = f"{rng.uniform(380, 480):.1f}"
    question, answer = "What temperature did the sensor in the kiln annex report?", value
    places = ("lab-a", "lab-b", "cold-room", "office-2", "hallway", "server-room", "dock")

    def make(i: int) -> list[object]:
        return [
            f"S-{100 + i % 40}",
            rng.choice(places),
            f"2026-03-02T{i // 60 % 24:02d}:{i % 60:02d}:00",
            f"{rng.uniform(17, 27):.1f}",
            rng.randrange(30, 65),
            f"{rng.uniform(3.0, 3.3):.2f}",
        ]

    odd = ["S-177", "kiln-annex", "2026-03-02T04:12:00", value, 12, "3.11"]
    header = ["sensor", "location", "time", "temp_c", "humidity", "battery_v"]
    return (
        _table(rng, header, make, odd),
        {"path": "telemetry/plant2.csv", "hours": 24},
        Fact(",".join(map(str, odd)), question, answer),
    )


def staff(rng: random.Random) -> Output:
    name = f"{rng.choice(('Perpetua', 'Auberon', 'Leopoldine', 'Evander'))} {rng.choice(('Quillfeather', 'Thistlewaite', 'Featherstone'))}"
    question, answer = "Who is the only employee in the Skunkworks department?", name
    departments = ("Engineering", "Sales", "Support", "Finance", "Legal", "Marketing", "Operations")

    def make(i: int) -> list[object]:
        return [
            f"E{3000 + i}",
            f"{rng.choice(FIRST)} {rng.choice(LAST)}",
            rng.choice(departments),
            rng.choice(("Analyst", "Engineer", "Manager", "Associate", "Lead")),
            rng.choice(CITIES),
            f"20{rng.randrange(10, 26)}-{rng.randrange(1, 13):02d}-01",
            f"E{3000 + rng.randrange(40)}",
        ]

    odd = [f"E{3000 + rng.randrange(50, 200)}", name, "Skunkworks", "Lead", "Basel", "2024-09-01", "E3001"]
    header = ["emp_id", "name", "department", "title", "office", "start_date", "manager"]
    return (
        _table(rng, header, make, odd),
        {"path": "hr/staff.csv"},
        Fact(",".join(map(str, odd)), question, answer),
    )


def inventory(rng: random.Random) -> Output:
    lex = Lexicon("kitchen", rng)
    product = f"{rng.choice(COMPANIES)} {lex.noun(rng).title()} {code(rng, 'AA-99')}"
    question, answer = "Which product was recalled?", product

    def make(i: int) -> list[object]:
        return [
            f"K{50000 + i}",
            f"{rng.choice(COMPANIES)} {lex.noun(rng).title()}",
            lex.noun(rng),
            rng.randrange(0, 500),
            rng.choice(("WH1", "WH2", "WH3")),
            rng.choice(("in stock", "in stock", "low", "backorder")),
        ]

    odd = [f"K{50000 + rng.randrange(100, 300)}", product, lex.noun(rng), 0, "WH2", "recalled"]
    header = ["sku", "name", "category", "qty", "warehouse", "status"]
    return (
        _table(rng, header, make, odd, "\t"),
        {"path": "inventory.tsv"},
        Fact(",".join(map(str, odd)), question, answer),
    )


def payments(rng: random.Random) -> Output:
    counterparty = (
        f"{rng.choice(('Fjord', 'Glacier', 'Geyser'))} {rng.choice(('Holdings', 'Partners', 'Trading'))} ehf"
    )
    question, answer = "Which counterparty was paid in Icelandic kronur (ISK)?", counterparty
    memos = ("invoice {n}, net 30", "refund, order {n}", "subscription, annual", "consulting, phase {n}")

    def make(i: int) -> list[object]:
        return [
            f"2026-01-{rng.randrange(1, 32):02d}",
            f"ACC-{rng.randrange(10, 40)}",
            f"{rng.uniform(-900, 9000):.2f}",
            rng.choice(("EUR", "USD", "GBP", "EUR")),
            rng.choice(COMPANIES) + " " + rng.choice(("Ltd", "GmbH", "Inc")),
            rng.choice(memos).format(n=rng.randrange(1000, 9999)),
        ]

    odd = [
        "2026-01-19",
        "ACC-31",
        f"{rng.uniform(100000, 900000):.2f}",
        "ISK",
        counterparty,
        "charter, Reykjavik harbour",
    ]
    header = ["date", "account", "amount", "currency", "counterparty", "memo"]
    return (
        _table(rng, header, make, odd),
        {"path": "ledger/2026-01.csv"},
        Fact(",".join(map(str, odd)), question, answer),
    )


TABLES: list[Callable[[random.Random], Output]] = [orders, sensors, staff, inventory, payments]
