"""What one recovery holds in memory and takes, through the Python API (``Squeezer``) at budget 2,000:
grep and search of a JSON original whose long keys nest deep (~770 KB; its pointers would add up to
~560 MB), and pages of ``"lines": "1-"`` asked 50 times of an 8 MB text (10,750 pages of 40,000
characters), each the first, second, middle and last page. Memory is tracemalloc's peak above where the
request started, beside the original's size; each tree in a process of its own.
"""

from __future__ import annotations

import argparse
import time
import tracemalloc
from pathlib import Path
from typing import Any

from ._harness import Tree, progress


def add_arguments(parser: argparse.ArgumentParser) -> None:
    pass


def nested(depth: int = 500, key_chars: int = 1500) -> str:
    """At each of ``depth`` levels three small values, then the next level under a long key."""
    level = '{{"a":{i},"b":"word {i}","c":true,"k{i:04d}{pad}":'
    return (
        "".join(level.format(i=i, pad="x" * (key_chars - 5)) for i in range(depth)) + '"bottom"' + "}" * depth
    )


def costs() -> dict[str, Any]:
    """Run with the mcpsqueeze first on the path (in the tree's process)."""
    import anyio

    from mcpsqueeze import Squeezer

    squeezer = Squeezer(budget=2000)

    def stored(text: str) -> str:
        presented = anyio.run(squeezer.present, "s", "t", {}, {"content": [{"type": "text", "text": text}]})
        return str(presented["_meta"]["truncation"]["response_id"])

    def held(arguments: dict[str, Any], page_size: int | None = None) -> dict[str, Any]:
        started = time.perf_counter()  # the time without tracemalloc, which slows Python down
        squeezer.answer_recover(arguments, page_size)
        seconds = round(time.perf_counter() - started, 3)
        tracemalloc.start()
        try:
            base = tracemalloc.get_traced_memory()[0]
            squeezer.answer_recover(arguments, page_size)
            return {"peak MB": round((tracemalloc.get_traced_memory()[1] - base) / 1e6, 2), "s": seconds}
        finally:
            tracemalloc.stop()

    original = nested()
    rid = stored(original)
    out: dict[str, Any] = {"deep original MB": round(len(original) / 1e6, 3)}
    for ask in ({"grep": "word 1"}, {"search": "word"}, {"grep": "bottom"}):
        found = held({"response_id": rid, **ask})
        out[f"{next(iter(ask))} {next(iter(ask.values()))}"] = {
            **found,
            "x original": round(found["peak MB"] * 1e6 / len(original), 2),
        }
    eight = "".join(f"line {n:07d} " + "abcdefgh" * 9 + "\n" for n in range(100_000))
    rid = stored(eight)
    for page in (0, 1, 5375, 10_749):
        out[f"page {page} of 50 x 8 MB"] = held(
            {"response_id": rid, "lines": ",".join(["1-"] * 50), "page": page}, 40_000
        )
    squeezer.close()
    return out


def run(args: argparse.Namespace, trees: list[Tree], workdir: Path) -> dict[str, Any]:
    figures = {}
    for tree in trees:
        figures[tree.label] = tree.call("recover:costs")
        progress(f"{tree.label}: done")
    return figures
