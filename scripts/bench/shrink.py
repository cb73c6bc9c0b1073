"""Preview time per MB for each format: the condense engine (``shrink_texts`` at the default budget,
20,000 characters) on an input of every format it previews, each tree in a process of its own, the trees
interleaved round by round; the least CPU time of each input's runs (the run the machine's other work
disturbed least). With shrinkfit installed (the ``bench`` extra), its time on the JSON inputs beside.

The inputs are made once, by this checkout: the demo server's data (``mcpsqueeze.demo``), this
repository's files and history at ``replay.SERVED``, tables and logs from fixed random seeds; so every
tree and every run reads the same bytes.
"""

from __future__ import annotations

import argparse
import json
import random
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ._harness import ROOT, Tree, git, progress, rotations
from .replay import SERVED


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--rounds", type=int, default=3, help="interleaved rounds (default 3)")


def _csv(rng: random.Random) -> str:
    rows = ["id,customer,region,product,quantity,unit_price,ordered_at"]
    for i in range(20000):
        region, day = (
            rng.choice(["EU", "US", "APAC", "LATAM"]),
            f"{rng.randrange(1, 13):02d}-{rng.randrange(1, 29):02d}",
        )
        customer, product = f"cust{rng.randrange(10**5):05d}", f"sku-{rng.randrange(900):03d}"
        quantity, price = rng.randrange(1, 50), rng.randrange(100, 99999) / 100
        rows.append(f"{i},{customer},{region},{product},{quantity},{price},2026-{day}")
    return "\n".join(rows)


def _log(rng: random.Random) -> str:
    out = []
    for i in range(20000):
        stamp = f"2026-11-30T{i // 3600 % 24:02d}:{i // 60 % 60:02d}:{i % 60:02d}.{rng.randrange(1000):03d}Z"
        roll = rng.random()
        if roll < 0.02:
            out.append(f"{stamp} ERROR db: connection reset by peer (pool={rng.randrange(8)})")
        elif roll < 0.06:
            out.append(f"{stamp} WARN cache: slow eviction {rng.randrange(50, 900)} ms")
        else:
            out.append(f"{stamp} INFO GET /v1/items/{rng.randrange(10**4)} 200 {rng.randrange(1, 90)} ms")
    return "\n".join(out)


def _html(size: int) -> str:
    """The golden page's head, navigation and footer around its article repeated."""
    page = (ROOT / "tests" / "shrink" / "fixtures" / "page.html").read_text(encoding="utf-8")
    start, end = page.index("<main>"), page.index("</main>")
    return page[:start] + page[start:end] * max(1, (size - len(page)) // (end - start)) + page[end:]


def _megabyte(text: str) -> str:
    """``text`` repeated or cut to about 1 MB, at a line's end."""
    text = text * (1 + (1 << 20) // len(text))
    return text[: text.rindex("\n", 0, 1 << 20)]


def inputs() -> dict[str, str]:
    from mcpsqueeze.demo._data import list_rows, prose, search_issues

    issues = search_issues("login bug", 300)
    paragraphs = prose("notes.txt").split("\n\n")[1:]
    python = "".join(
        git("show", f"{SERVED}:{p}") + "\n"
        for p in git("ls-tree", "-r", "--name-only", SERVED, "src").split()
        if p.endswith(".py")
    )
    return {
        "JSON object, 300 issues": json.dumps(issues),
        "JSON array, 300 rows": json.dumps(list_rows("orders", 300)),
        "JSON object, 1 MB": json.dumps({**issues, "issues": issues["issues"] * 4}),
        "prose, a paragraph per line": "\n\n".join(p.replace("\n", " ") for p in paragraphs),
        "git log": git("log", "-n", "300", SERVED),
        "Python source, 1 MB": _megabyte(python),
        "Markdown, 1 MB": _megabyte(git("show", f"{SERVED}:README.md")),
        "unified diff, 1 MB": _megabyte(git("diff", git("rev-list", "--max-parents=0", SERVED), SERVED)),
        "CSV, 1 MB": _megabyte(_csv(random.Random(7))),
        "log, 1 MB": _megabyte(_log(random.Random(11))),
        "HTML page, 1 MB": _html(1_000_000),
        "HTML page, 10 MB": _html(10_000_000),
    }


def least_ms_per_mb(preview: Callable[[str], object], text: str) -> float:
    best = float("inf")
    for _ in range(max(3, min(15, 3_000_000 // len(text)))):
        started = time.process_time()
        preview(text)
        best = min(best, time.process_time() - started)
    return round(best * 1000 / (len(text) / 1e6), 1)


def times(path: str) -> dict[str, float]:
    """Each input's least ms per MB with the mcpsqueeze first on the path (run in the tree's process)."""
    from mcpsqueeze.shrink import RecoveryHint, shrink_texts

    hint = RecoveryHint("3f2a9c0e5b7d41e8a6c4f0b2d9e1a7c5", "/home/agent/recovery/mcpsqueeze-3f2a.json")
    made = json.loads(Path(path).read_text(encoding="utf-8"))
    return {
        name: least_ms_per_mb(lambda t: shrink_texts([t], 20000, hint), text) for name, text in made.items()
    }


def run(args: argparse.Namespace, trees: list[Tree], workdir: Path) -> dict[str, Any]:
    made = inputs()
    (workdir / "inputs.json").write_text(json.dumps(made), encoding="utf-8")
    best: dict[str, dict[str, float]] = {tree.label: {} for tree in trees}
    for number, order in rotations(trees, args.rounds):
        for tree in order:
            for name, value in tree.call("shrink:times", path=str(workdir / "inputs.json")).items():
                best[tree.label][name] = min(best[tree.label].get(name, value), value)
        progress(f"round {number + 1} of {args.rounds} done")
    figures: dict[str, Any] = {"ms per MB": best}
    if len(trees) > 1:
        first = best[trees[0].label]
        figures["ratio to the first tree"] = {
            t.label: {k: round(v / first[k], 2) for k, v in best[t.label].items()} for t in trees[1:]
        }
    try:
        import shrinkfit
    except ImportError:
        return figures
    shrunk = {k: v for k, v in made.items() if k.startswith("JSON")}
    figures["shrinkfit ms per MB"] = {
        k: least_ms_per_mb(lambda t: shrinkfit.shrink(t, 20000, indent=0), v) for k, v in shrunk.items()
    }
    return figures
