"""Scoring previews on the fact set, through the Python API at its defaults.

Each output is presented by a ``mcpsqueeze.Squeezer`` as the result of one call (its arguments are
what the call was given, never the question). Then:

- **visible**: the answer is in the preview the model reads (every text block);
- else **search**: one ``search`` recover call with the question's words, and the answer is in its
  answer (the agent pays that answer and one more round trip);
- else **more**: the agent needs more than one search; priced as the whole original read on top, two
  more round trips.

Cost: the o200k tokens the model reads (the preview, and the recovery answers it needed) plus
``TURN`` per extra round trip.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from mcpsqueeze import Squeezer
from mcpsqueeze.accounting._tokens import count_tokens

from . import KINDS, Case

__all__ = ["TURN", "Scored", "Totals", "score", "shown_text"]

TURN = 1000  # tokens one more round trip is priced at


@dataclass(frozen=True)
class Scored:
    case: Case
    preview: str
    outcome: str  # "visible", "search" or "more"
    preview_tokens: int
    cost: int


@dataclass
class Totals:
    outputs: int = 0
    whole: int = 0  # shown unchanged (not shrunk at all)
    visible: int = 0
    search: int = 0
    more: int = 0
    cost: int = 0
    direct: int = 0
    by_kind: dict[str, list[int]] = field(
        default_factory=dict
    )  # kind -> [outputs, visible, search, more, cost]

    def add(self, scored: Scored, direct: int) -> None:
        self.whole += scored.preview == scored.case.text
        row = self.by_kind.setdefault(scored.case.kind, [0, 0, 0, 0, 0])
        column = ("visible", "search", "more").index(scored.outcome)
        self.outputs += 1
        self.cost += scored.cost
        self.direct += direct
        setattr(self, scored.outcome, getattr(self, scored.outcome) + 1)
        row[0] += 1
        row[1 + column] += 1
        row[4] += scored.cost

    def table(self) -> str:
        lines = [f"{'kind':8} {'outputs':>7} {'visible':>7} {'search':>6} {'more':>4} {'cost':>8}"]
        for kind in [k for k in KINDS if k in self.by_kind]:
            n, v, s, m, c = self.by_kind[kind]
            lines.append(f"{kind:8} {n:7} {v:7} {s:6} {m:4} {c:8,}")
        lines.append(
            f"{'all':8} {self.outputs:7} {self.visible:7} {self.search:6} {self.more:4} {self.cost:8,}"
        )
        lines.append(f"direct (everything shown): {self.direct:,} tokens; shown whole: {self.whole}")
        return "\n".join(lines)


def shown_text(result: dict[str, Any]) -> str:
    """What the model reads of a presented result: its text blocks, joined by newlines."""
    return "\n".join(block["text"] for block in result.get("content", []) if block.get("type") == "text")


async def _present_all(squeezer: Squeezer, cases: Iterable[Case]) -> list[tuple[Case, dict[str, Any]]]:
    out = []
    for case in cases:
        result = {"content": [{"type": "text", "text": case.text}], "isError": False}
        out.append((case, await squeezer.present("facts", case.generator, case.arguments, result)))
    return out


def score(cases: list[Case], **options: Any) -> tuple[Totals, list[Scored]]:
    """Every case presented and scored; ``options`` are the Squeezer's keywords (none: defaults)."""
    squeezer = Squeezer(**options)
    totals = Totals()
    scored: list[Scored] = []
    try:
        for case, presented in asyncio.run(_present_all(squeezer, cases)):
            preview = shown_text(presented)
            tokens = count_tokens(preview)
            cost, outcome = tokens, "visible"
            if case.answer not in preview:
                rid = presented["_meta"]["truncation"]["response_id"]
                found = shown_text(squeezer.recover_result(rid, search=case.question))
                cost += count_tokens(found) + TURN
                outcome = "search"
                if case.answer not in found:
                    cost += count_tokens(case.text) + TURN
                    outcome = "more"
            one = Scored(case, preview, outcome, tokens, cost)
            scored.append(one)
            totals.add(one, count_tokens(case.text))
    finally:
        squeezer.close()
    return totals, scored
