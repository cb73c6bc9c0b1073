"""Condense-engine time per size class: mcpsqueeze's ``shrink_texts`` against ``shrinkfit``, side by side.

Run: ``python scripts/bench_engine.py [--repeats 7] [--clock cpu|wall]``. For each JSON shape (a
tracker's records, a product array, a memory graph, the ``mcpsqueeze.demo.bulk`` blob) scaled to about
10 KB, 50 KB, 200 KB and 1 MB, it times ``shrink_texts`` (text in: parse, condense, render, truncation
record) and ``shrinkfit.shrink`` (text in, text out, native code) on the same text, interleaved so that
drift on a busy machine hits both, and prints the medians and their ratio. 10 KB inputs fit a 20,000
budget, so that class is shrunk to 4,000 characters; the others to 20,000 (the default budget). The
shrinkfit columns are skipped when the package is not installed (``pip install shrinkfit``; it is a
peer, not a dependency). Density is ``scripts/bench_shrink.py``'s job; this script only times.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_shrink import HINT, items_array, read_graph, records_object
from mcpsqueeze.demo.bulk import blob
from mcpsqueeze.shrink import shrink_texts

try:
    import shrinkfit
except ImportError:  # pragma: no cover - optional comparison
    shrinkfit = None

SIZES = (
    ("10 KB", 10_000, 4_000),
    ("50 KB", 50_000, 20_000),
    ("200 KB", 200_000, 20_000),
    ("1 MB", 1_000_000, 20_000),
)


def _scaled(make: Callable[[int], str], size: int) -> str:
    """``make(n)`` with ``n`` grown until the text is about ``size`` characters."""
    n = 4
    while True:
        text = make(n)
        if len(text) >= size:
            return text
        n = max(n + 1, int(n * size / max(len(text), 1) * 1.02))


SHAPES: dict[str, Callable[[int], str]] = {
    "records": lambda n: json.dumps(records_object(random.Random(1), n)),
    "items": lambda n: json.dumps(items_array(random.Random(2), n)),
    "graph": lambda n: json.dumps(read_graph(random.Random(3), n), indent=2),
    "bulk": lambda n: blob(n * 150, 4),
}


def _time(fn: Callable[[], Any], clock: Callable[[], float]) -> float:
    started = clock()
    fn()
    return clock() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=7, help="timed runs of each engine per input")
    parser.add_argument("--shapes", default=",".join(SHAPES), help="comma-separated shapes")
    parser.add_argument(
        "--clock",
        choices=("cpu", "wall"),
        default="cpu",
        help="cpu: this thread's CPU time (steadier on a shared machine; both engines run in it); wall",
    )
    args = parser.parse_args()
    clock = time.thread_time if args.clock == "cpu" else time.perf_counter
    print(f"median {args.clock} time of {args.repeats} interleaved runs per input")
    header = f"{'shape':<8} {'size':>6} {'chars':>8} {'budget':>6} | {'ours ms':>8}"
    if shrinkfit is not None:
        header += f" | {'sf ms':>7} | {'ours/sf':>7}"
    print(header)
    print("-" * len(header))
    ratios: dict[str, list[float]] = {}
    for label, size, budget in SIZES:
        for shape in args.shapes.split(","):
            text = _scaled(SHAPES[shape], size)
            ours: list[float] = []
            theirs: list[float] = []
            shrink_texts([text], budget, HINT)  # warm up
            if shrinkfit is not None:
                shrinkfit.shrink(text, budget, indent=0)
            for _ in range(args.repeats):
                ours.append(_time(lambda t=text, b=budget: shrink_texts([t], b, HINT), clock))
                if shrinkfit is not None:
                    theirs.append(_time(lambda t=text, b=budget: shrinkfit.shrink(t, b, indent=0), clock))
            mine = statistics.median(ours) * 1000
            row = f"{shape:<8} {label:>6} {len(text):>8} {budget:>6} | {mine:>8.2f}"
            if theirs:
                sf = statistics.median(theirs) * 1000
                ratios.setdefault(label, []).append(mine / sf)
                row += f" | {sf:>7.2f} | {mine / sf:>6.1f}x"
            print(row, flush=True)
    if ratios:
        print()
        for label, values in ratios.items():
            median = statistics.median(values)
            print(f"{label:>6}: ours/shrinkfit median {median:.1f}x over {len(values)} shapes")


if __name__ == "__main__":
    main()
