"""Compare mcpsqueeze's condense engine with the ``shrinkfit`` package on the same inputs.

Run: ``python scripts/bench_shrink.py`` (or ``--baseline REV [--repeat N]``: the time per MB of a
preview at the default budget, of this tree and of another commit's ``src/`` side by side, interleaved,
the least of each input's runs; its inputs add HTML pages of 1 MB and 10 MB). Inputs are generated
deterministically (seeded), so runs are comparable. For each input and budget it prints the output
length, how many leaf values of the output equal a leaf of the original (verbatim values; for text:
verbatim lines), how many of the document's distinct field names are visible, and the time per MB of
input. The shrinkfit columns are
skipped when the package is not installed (``pip install shrinkfit``).

Three views of shrinkfit:

- ``shrinkfit``: the bare package at the whole budget. Its output carries no recovery information,
  while ours must fit the truncation record (message, response id, file path, report) or the trailing
  notice into the same budget.
- ``sf@room``: shrinkfit given only the room our content had (budget minus our recovery text): the
  like-for-like density comparison (verbatim values per character of content).
- ``mcp-compressor``: shrinkfit as shipped, i.e. ``mcp-compressor --shrinkfit=N`` in front of a backend
  returning the same text, with its own recovery notice inside the budget (``scripts/_compressor_shrink.py``;
  skipped when ``mcp-compressor`` is not installed). ``refused`` means it answered with an error.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
# ``--src DIR`` (a baseline's tree, in its own process) goes before this tree's src
_SRC = sys.argv[sys.argv.index("--src") + 1] if "--src" in sys.argv else str(ROOT / "src")
sys.path.insert(0, _SRC)
sys.path.insert(1, str(Path(__file__).resolve().parent))

from mcpsqueeze._voice import McpVoice  # noqa: E402
from mcpsqueeze.shrink import RecoveryHint, shrink_texts  # noqa: E402

try:
    import shrinkfit
except ImportError:  # pragma: no cover - optional comparison
    shrinkfit = None

from _compressor_shrink import COMPRESSOR, compressor_results  # noqa: E402

BUDGETS = (20000, 10000, 4000, 1024)
HINT = RecoveryHint(
    response_id="3f2a9c0e5b7d41e8a6c4f0b2d9e1a7c5",
    file="/home/agent/.cache/mcpsqueeze/recovery/mcpsqueeze-3f2a9c0e5b7d41e8a6c4f0b2d9e1a7c5.json",
    voice=McpVoice(),
)
WORDS = [
    "the",
    "quick",
    "brown",
    "fox",
    "jumps",
    "over",
    "lazy",
    "dog",
    "data",
    "server",
    "request",
    "response",
    "token",
    "cache",
    "budget",
    "agent",
    "model",
    "context",
    "result",
    "record",
    "field",
    "value",
    "index",
    "query",
    "error",
    "retry",
    "stream",
    "buffer",
]


def _sentence(rng: random.Random, lo: int, hi: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(lo, hi))).capitalize() + "."


def records_object(rng: random.Random, n: int = 300) -> dict[str, Any]:
    records = []
    for i in range(n):
        rec: dict[str, Any] = {
            "id": i,
            "key": f"PROJ-{1000 + i}",
            "summary": _sentence(rng, 3, 9),
            "status": rng.choice(["open", "in progress", "done", "blocked"]),
            "assignee": rng.choice(["ana", "bo", "chen", "dita", None]),
            "priority": rng.randint(1, 5),
            "labels": rng.sample(["bug", "ui", "api", "perf", "docs", "infra"], rng.randint(0, 3)),
            "description": " ".join(_sentence(rng, 6, 20) for _ in range(rng.randint(1, 6))),
            "created": f"2024-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}T10:00:00Z",
        }
        if i % 37 == 5:
            rec["resolution"] = rng.choice(["fixed", "wontfix"])
        if i % 91 == 7:
            rec["watchers"] = [{"user": "ana", "since": "2024-01-01"}]
        records.append(rec)
    return {"total": n, "startAt": 0, "issues": records, "nextPageToken": "opaque-token-123"}


def items_array(rng: random.Random, n: int = 300) -> list[Any]:
    out = []
    for i in range(n):
        item: dict[str, Any] = {
            "sku": f"SKU-{i:05d}",
            "name": _sentence(rng, 2, 4),
            "price": round(rng.uniform(1, 500), 2),
            "stock": rng.randint(0, 1000),
            "tags": rng.sample(WORDS, 3),
        }
        if i % 50 == 3:
            item["discontinued"] = True
        out.append(item)
    return out


def prose(rng: random.Random, paragraphs: int = 120) -> str:
    return "\n\n".join(
        " ".join(_sentence(rng, 8, 25) for _ in range(rng.randint(2, 6))) for _ in range(paragraphs)
    )


def directory_tree(rng: random.Random, depth: int = 0) -> list[Any]:
    entries: list[Any] = []
    for i in range(rng.randint(3, 9) if depth < 4 else rng.randint(1, 4)):
        if depth < 4 and rng.random() < 0.35:
            entries.append(
                {
                    "name": f"{rng.choice(WORDS)}_{i}",
                    "type": "directory",
                    "children": directory_tree(rng, depth + 1),
                }
            )
        else:
            ext = rng.choice(["py", "md", "json", "ts", "txt"])
            entries.append({"name": f"{rng.choice(WORDS)}_{i}.{ext}", "type": "file"})
    return entries


def read_graph(rng: random.Random, n: int = 150) -> dict[str, Any]:
    names = [f"{rng.choice(WORDS).capitalize()}_{i}" for i in range(n)]
    entities = [
        {
            "type": "entity",
            "name": name,
            "entityType": rng.choice(["person", "project", "service", "concept"]),
            "observations": [_sentence(rng, 4, 12) for _ in range(rng.randint(1, 5))],
        }
        for name in names
    ]
    relations = [
        {
            "type": "relation",
            "from": rng.choice(names),
            "to": rng.choice(names),
            "relationType": rng.choice(["works_on", "depends_on", "knows", "owns"]),
        }
        for _ in range(n * 2)
    ]
    return {"entities": entities, "relations": relations}


def git_log(rng: random.Random, n: int = 250) -> str:
    lines = []
    for i in range(n):
        sha = "".join(rng.choice("0123456789abcdef") for _ in range(40))
        lines.append(f"commit {sha}")
        lines.append(f"Author: {rng.choice(['Ana Lima', 'Bo Chen', 'Dita Roy'])} <dev{i % 7}@example.com>")
        lines.append(f"Date:   Mon Jan {1 + i % 28} 10:{i % 60:02d}:00 2024 +0000")
        lines.append("")
        lines.append(f"    {_sentence(rng, 4, 10)}")
        if rng.random() < 0.5:
            lines.append("")
            lines.append(f"    {_sentence(rng, 8, 20)}")
        lines.append("")
    return "\n".join(lines)


# -- metrics ------------------------------------------------------------------------------------------


def _leaves(node: Any, out: list[tuple[str, Any]]) -> None:
    stack = [node]
    while stack:
        cur = stack.pop()
        if isinstance(cur, dict):
            stack.extend(cur.values())
        elif isinstance(cur, list):
            stack.extend(cur)
        else:
            out.append((type(cur).__name__, cur))


def _keys(node: Any, out: set[str]) -> None:
    stack = [node]
    while stack:
        cur = stack.pop()
        if isinstance(cur, dict):
            out.update(cur)
            stack.extend(cur.values())
        elif isinstance(cur, list):
            stack.extend(cur)


def measure(original: str, shown: str) -> tuple[int, str]:
    """(verbatim values, "visible/total field names") of ``shown`` against ``original``."""
    try:
        orig = json.loads(original)
        out = json.loads(shown)
    except ValueError:
        orig_lines = set(original.splitlines())
        return sum(1 for line in shown.splitlines() if line and line in orig_lines), "-"
    if isinstance(out, dict) and isinstance(orig, dict) and "truncation" not in orig:
        out.pop("truncation", None)
    orig_leaves: list[tuple[str, Any]] = []
    _leaves(orig, orig_leaves)
    known = set(orig_leaves)
    out_leaves: list[tuple[str, Any]] = []
    _leaves(out, out_leaves)
    orig_keys: set[str] = set()
    out_keys: set[str] = set()
    _keys(orig, orig_keys)
    _keys(out, out_keys)
    return sum(1 for leaf in out_leaves if leaf in known), f"{len(orig_keys & out_keys)}/{len(orig_keys)}"


def timed(fn: Callable[[], Any], size: int) -> tuple[Any, float]:
    runs = max(3, min(50, 2_000_000 // max(size, 1)))
    fn()  # warm up
    start = time.perf_counter()
    for _ in range(runs):
        text = fn()
    elapsed = (time.perf_counter() - start) / runs
    return text, elapsed / (size / 1_000_000)


def ours(text: str, budget: int) -> tuple[str, str, int]:
    """(the presented text block, the trailing notice or "", characters spent on recovery info)."""
    result = shrink_texts([text], budget, HINT)
    if result is None:
        return text, "", 0
    overhead = len(result.notice or "")
    if '"truncation":{"message"' in result.texts[0]:
        record = json.dumps(result.truncation, ensure_ascii=False, separators=(",", ":"))
        overhead += len(',"truncation":') + len(record)
    return result.texts[0], result.notice or "", overhead


def theirs(text: str, budget: int) -> str:
    assert shrinkfit is not None
    return str(shrinkfit.shrink(text, budget, indent=0))


def compressor_measure(original: str, result: dict[str, Any] | None) -> str:
    """mcp-compressor's presented length, verbatim values and field names (first text block: the
    shrunk value; later blocks: its notice)."""
    if result is None:
        return f"{'refused':>22}"
    texts = [b["text"] for b in result.get("content", []) if b.get("type") == "text"]
    values, fields = measure(original, texts[0]) if texts else (0, "-")
    return f"{sum(map(len, texts)):>6} {values:>6} {fields:>7}"


def html_page(size: int) -> str:
    """A page of about ``size`` characters: the golden fixture's head, navigation and footer around
    its article repeated."""
    page = (ROOT / "tests" / "shrink" / "fixtures" / "page.html").read_text(encoding="utf-8")
    start, end = page.index("<main>"), page.index("</main>")
    body = page[start:end]
    return page[:start] + body * max(1, (size - len(page)) // len(body)) + page[end:]


def table_inputs() -> dict[str, str]:
    """The inputs of the table (seeded), the last one for timing only."""
    rng = random.Random(20240601)
    inputs = {
        "object: 300 records": json.dumps(records_object(rng)),
        "array: 300 items": json.dumps(items_array(rng)),
        "prose": prose(rng),
        "directory_tree": json.dumps(directory_tree(random.Random(7)), indent=2),
        "memory read_graph": json.dumps(read_graph(rng), indent=2),
        "git log": git_log(rng),
    }
    big = {"issues": records_object(random.Random(1), n=300)["issues"] * 12}
    inputs["1 MB object (timing)"] = json.dumps(big)
    return inputs


def timing_inputs() -> dict[str, str]:
    """The inputs of the time-per-MB comparison: the table's, and HTML pages of 1 MB and 10 MB."""
    inputs = table_inputs()
    inputs["HTML page, 1 MB"] = html_page(1_000_000)
    inputs["HTML page, 10 MB"] = html_page(10_000_000)
    return inputs


def ms_per_mb(text: str) -> float:
    """The least of a few runs' ms per MB of a preview at the default budget (the least: the run the
    machine's other load disturbed least)."""
    best = float("inf")
    for _ in range(max(3, min(15, 3_000_000 // len(text)))):
        start = time.perf_counter()
        shrink_texts([text], 20000, HINT)
        best = min(best, time.perf_counter() - start)
    return best * 1000 / (len(text) / 1_000_000)


def compare(baseline: str, repeat: int) -> None:
    """Time per MB of this tree and of ``baseline``'s src, interleaved ``repeat`` times, least of all."""
    with tempfile.TemporaryDirectory(prefix="bench-shrink-") as tmp:
        command = ["git", "-C", str(ROOT), "archive", baseline, "src"]
        archive = subprocess.run(command, capture_output=True, check=True)
        subprocess.run(["tar", "-x", "-C", tmp], input=archive.stdout, check=True)
        trees = {f"@{baseline}": str(Path(tmp) / "src"), "this tree": str(ROOT / "src")}
        best: dict[str, dict[str, float]] = {name: {} for name in trees}
        for _ in range(repeat):
            for name, src in trees.items():
                env = {**os.environ, "PYTHONPATH": src}
                command = [sys.executable, __file__, "--times", "--src", src]
                done = subprocess.run(command, capture_output=True, text=True, env=env)
                if done.returncode:
                    raise SystemExit(done.stderr)
                for key, value in json.loads(done.stdout).items():
                    best[name][key] = min(best[name].get(key, value), value)
    base, ours = best.values()
    print(f"{'input':<22} {'ms/MB @' + baseline:>16} {'ms/MB here':>12} {'ratio':>7}")
    for key in base:
        print(f"{key:<22} {base[key]:>16.1f} {ours[key]:>12.1f} {ours[key] / base[key]:>6.2f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", help="compare time per MB with this commit's src/ (side by side)")
    parser.add_argument("--repeat", type=int, default=3, help="interleaved rounds of --baseline (default 3)")
    parser.add_argument("--times", action="store_true", help=argparse.SUPPRESS)  # one tree's times, as JSON
    parser.add_argument("--src", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.times:
        print(json.dumps({name: ms_per_mb(text) for name, text in timing_inputs().items()}))
        return
    if args.baseline:
        compare(args.baseline, args.repeat)
        return
    inputs = table_inputs()
    compressed = compressor_results(inputs, BUDGETS) if Path(COMPRESSOR).exists() else None
    header = f"{'input':<22} {'chars':>8} {'budget':>6}"
    header += f" | {'ours len':>8} {'values':>6} {'fields':>7} {'ms/MB':>6}"
    if shrinkfit:
        header += f" | {'sf len':>6} {'values':>6} {'fields':>7} {'ms/MB':>6} | {'sf@room':>7} {'values':>6}"
    if compressed is not None:
        header += f" | {'mcpc len':>8} {'values':>6} {'fields':>7}"
    print(header)
    print("-" * len(header))
    for name, text in inputs.items():
        budgets = (20000,) if "timing" in name else BUDGETS
        for budget in budgets:
            (shown, notice, overhead), per_mb = timed(lambda t=text, b=budget: ours(t, b), len(text))
            values, fields = measure(text, shown)
            total = len(shown) + len(notice)
            row = f"{name:<22} {len(text):>8} {budget:>6} | {total:>8} {values:>6} {fields:>7} "
            row += f"{per_mb * 1000:>6.1f}"
            if shrinkfit is not None:
                try:
                    their, their_mb = timed(lambda t=text, b=budget: theirs(t, b), len(text))
                    t_values, t_fields = measure(text, their)
                    row += f" | {len(their):>6} {t_values:>6} {t_fields:>7} {their_mb * 1000:>6.1f}"
                    # shrinkfit given only the room our preview had after its recovery record/notice
                    room = budget - overhead
                    same, _ = measure(text, theirs(text, room))
                    row += f" | {room:>7} {same:>6}"
                except Exception as exc:  # shrinkfit refuses prose
                    row += f" | {'error: ' + type(exc).__name__:>29} | {'':>14}"
            if compressed is not None and "timing" not in name:
                row += " | " + compressor_measure(text, compressed.get((name, budget)))
            print(row)


if __name__ == "__main__":
    main()
