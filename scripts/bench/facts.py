"""The fact set (tests/factset): 62 tool outputs of five kinds, each hiding one fact a question asks for,
presented by a ``Squeezer`` at its defaults (each tree in a process of its own). Per kind and in all:
the answers visible in the preview, those one ``search`` recover call with the question's words finds,
those that need more, and the cost (o200k tokens seen + 1,000 per extra round trip; the scoring is
tests/factset/_score.py).
"""

from __future__ import annotations

import argparse
import importlib
import sys
from pathlib import Path
from typing import Any

from ._harness import ROOT, Tree, progress


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--seed", type=int, default=0, help="the set's random seed (0: the one the tests assert on)"
    )


def score(seed: int) -> dict[str, Any]:
    """The set scored with the mcpsqueeze first on the path (run in the tree's process)."""
    sys.path.insert(1, str(ROOT / "tests"))
    factset = importlib.import_module("factset")
    totals, _ = importlib.import_module("factset._score").score(factset.build(seed))
    columns = ("outputs", "visible", "search", "more", "cost")
    return {
        "by kind": {kind: dict(zip(columns, row, strict=True)) for kind, row in totals.by_kind.items()},
        "all": {name: getattr(totals, name) for name in columns},
        "direct tokens": totals.direct,
        "shown whole": totals.whole,
    }


def run(args: argparse.Namespace, trees: list[Tree], workdir: Path) -> dict[str, Any]:
    figures = {}
    for tree in trees:
        figures[tree.label] = tree.call("facts:score", seed=args.seed)
        progress(f"{tree.label}: done")
    return figures
