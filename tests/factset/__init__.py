"""A set of tool outputs that each hide one fact, and the question that asks for it.

Five kinds, as agents meet them: prose (18), HTML pages (10), JSON record lists (14), logs (10) and
CSV/TSV tables (10), each of about 20-30 K characters (HTML pages less: their markup is half of
them), made by several generators per kind that differ in structure, vocabulary, size and where and
how the fact is planted. Deterministic for a seed; ``build(seed)`` makes the 62 outputs.

A preview is judged by whether the answer is visible in it, else whether one ``search`` recover call
with the question's words finds it (``python -m scripts.bench facts``).
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from ._facts import Fact, sentence_fact
from ._html import HTML
from ._logs import LOGS
from ._prose import PROSE
from ._records import RECORDS
from ._tables import TABLES

__all__ = ["KINDS", "Case", "build"]

KINDS = ("prose", "html", "json", "logs", "csv")


@dataclass(frozen=True)
class Case:
    kind: str
    generator: str
    arguments: dict[str, object]
    text: str
    question: str
    answer: str

    @property
    def name(self) -> str:
        return f"{self.kind}/{self.generator}"


def _one(kind: str, index: int, seed: int) -> Case:
    for attempt in range(20):  # (an answer that happens to occur twice: the next draw)
        rng = random.Random(f"{seed}:{kind}:{index}:{attempt}")
        if kind in ("prose", "html"):
            generators = PROSE if kind == "prose" else HTML
            gen = generators[index % len(generators)]
            fact: Fact = sentence_fact(rng)
            text, arguments = gen(rng, fact)
        else:
            pool = {"json": RECORDS, "logs": LOGS, "csv": TABLES}[kind]
            gen2 = pool[index % len(pool)]
            text, arguments, fact = gen2(rng)
            gen = gen2  # type: ignore[assignment]
        if text.count(fact.answer) == 1:
            return Case(kind, gen.__name__, arguments, text, fact.question, fact.answer)
    raise AssertionError(f"no output of {kind} #{index} holds its answer once")


_COUNTS = {"prose": 18, "html": 10, "json": 14, "logs": 10, "csv": 10}


def build(seed: int = 0) -> list[Case]:
    """The 62 outputs for ``seed``, kind by kind."""
    return [_one(kind, i, seed) for kind in KINDS for i in range(_COUNTS[kind])]
