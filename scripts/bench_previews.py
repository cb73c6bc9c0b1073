"""Landmark coverage and condensing speed of text previews: outlines versus the old head and tail.

Run: ``python scripts/bench_previews.py`` from a checkout (it reads this repository's own files and
its git history, and generates a CSV table and a log, seeded). For each budget it prints, over the
inputs that get shrunk, the share of the originals' landmarks (``mcpsqueeze.shrink.landmarks``:
definition lines, diff file and hunk headers, commit headers and subjects, section headers and
package names, headings) visible verbatim as whole lines of the preview, and the characters shown,
once with today's engine and once with the outlines switched off (head and tail, as before). Then
the time per MB of ``shrink_texts`` on large inputs of each kind, both ways, and with query terms.

``--verbose`` lists each input's landmarks visible before and after.
"""

from __future__ import annotations

import random
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

import mcpsqueeze.shrink._engine as engine  # noqa: E402
from mcpsqueeze.shrink import RecoveryHint, landmarks, shrink_texts  # noqa: E402

HINT = RecoveryHint("0123456789abcdef0123456789abcdef", str(Path.home() / "rec" / "x.json"))
BUDGETS = (20000, 8000, 4000)
_OUTLINER = engine.Outliner


class _NoOutline:
    """Stands in for the engine's Outliner: every text keeps its head and tail, as before outlines."""

    def __init__(self, *args: object) -> None:
        pass

    def pack(self, *args: object, **kwargs: object) -> None:
        return None


def _git(*args: str) -> str:
    return subprocess.run(["git", "-C", str(ROOT), *args], capture_output=True, text=True, check=True).stdout


def _mcp_git_log(count: int) -> str:
    """mcp-server-git's git_log text (its own f-string, reproduced with git's --format)."""
    body = _git("log", f"-n{count}", "--format=Commit: %H%nAuthor: %an%nDate: %ai%nMessage: %B%x00")
    return "Commit history:\n" + "\n".join(part.lstrip("\n") for part in body.split("\x00") if part.strip())


def _csv(rows: int, seed: int = 7) -> str:
    rng = random.Random(seed)
    out = ["id,customer,region,product,quantity,unit_price,ordered_at\n"]
    for i in range(rows):
        out.append(
            f"{i},cust{rng.randrange(10**5):05d},{rng.choice(['EU', 'US', 'APAC', 'LATAM'])},"
            f"sku-{rng.randrange(900):03d},{rng.randrange(1, 50)},{rng.randrange(100, 99999) / 100},"
            f"2026-{rng.randrange(1, 13):02d}-{rng.randrange(1, 29):02d}\n"
        )
    return "".join(out)


def _log(lines: int, seed: int = 11) -> str:
    rng = random.Random(seed)
    paths = ["/v1/items", "/v1/users", "/healthz", "/v1/search"]
    out = []
    for i in range(lines):
        stamp = f"2026-11-30T{i // 3600 % 24:02d}:{i // 60 % 60:02d}:{i % 60:02d}.{rng.randrange(1000):03d}Z"
        roll = rng.random()
        if roll < 0.02:
            out.append(f"{stamp} ERROR db: connection reset by peer (pool={rng.randrange(8)})\n")
        elif roll < 0.06:
            out.append(f"{stamp} WARN cache: slow eviction {rng.randrange(50, 900)} ms\n")
        elif roll < 0.5:
            out.append(f"{stamp} INFO healthcheck ok\n")
        else:
            out.append(
                f"{stamp} INFO GET {rng.choice(paths)}/{rng.randrange(10**4)} 200 {rng.randrange(1, 90)} ms\n"
            )
    return "".join(out)


def inputs() -> Iterator[tuple[str, str]]:
    """Realistic text results a coding agent gets: files it reads, git output, tables and logs."""
    for path in _git("ls-files").split():
        if path.endswith((".py", ".md", ".toml")) and "golden" not in path and "fixtures" not in path:
            yield path, (ROOT / path).read_text(encoding="utf-8")
    yield "git log", _git("log")
    yield "git log -p -n 8", _git("log", "-p", "-n8")
    yield "git_log (mcp-server-git) 30", _mcp_git_log(30)
    first = _git("rev-list", "--max-parents=0", "HEAD").split()[0]
    for k in range(12):
        yield f"git show HEAD~{k}", _git("show", f"HEAD~{k}")
    yield "git diff HEAD~3", "Diff with HEAD~3:\n" + _git("diff", "HEAD~3")
    yield "git diff HEAD~10", _git("diff", "HEAD~10")
    yield "git diff <root>", _git("diff", first, "HEAD", "--", "src")
    yield "orders.csv", _csv(3000)
    yield "server.log", _log(8000)


def _preview(text: str, budget: int, outlines: bool, terms: tuple[str, ...] = ()) -> str | None:
    engine.Outliner = _OUTLINER if outlines else _NoOutline  # type: ignore[misc]
    try:
        result = shrink_texts([text], budget, HINT, terms)
    finally:
        engine.Outliner = _OUTLINER  # type: ignore[misc]
    return None if result is None else result.texts[0]


def coverage(verbose: bool) -> None:
    corpus = list(inputs())
    print(f"{len(corpus)} inputs, {sum(map(len, (t for _, t in corpus))) / 1e6:.1f} MB")
    head = f"{'budget':>7} {'shrunk':>6} {'landmarks':>9} {'before':>8} {'after':>8}"
    print(f"{head} {'chars before':>13} {'after':>9}")
    for budget in BUDGETS:
        totals = {"marks": 0, True: 0, False: 0, "chars_True": 0, "chars_False": 0, "shrunk": 0}
        for name, text in corpus:
            marks = landmarks(text)
            old = _preview(text, budget, outlines=False)
            if old is None:
                continue
            new = _preview(text, budget, outlines=True)
            assert new is not None
            totals["shrunk"] += 1
            totals["chars_False"] += len(old)
            totals["chars_True"] += len(new)
            seen = {}
            for outlines, preview in ((False, old), (True, new)):
                shown = set(preview.split("\n"))
                seen[outlines] = sum(mark in shown for mark in marks)
                totals[outlines] += seen[outlines]
            totals["marks"] += len(marks)
            if verbose:
                print(f"  {budget:>6} {name:<44} {len(marks):>5} {seen[False]:>5} {seen[True]:>5}")
        marks = max(1, totals["marks"])
        print(
            f"{budget:>7} {totals['shrunk']:>6} {totals['marks']:>9} {totals[False] / marks:>8.1%} "
            f"{totals[True] / marks:>8.1%} {totals['chars_False']:>13} {totals['chars_True']:>9}"
        )


def _timed(func: Callable[[], object], repeat: int = 5) -> float:
    """The best of ``repeat`` runs in CPU seconds of this process (the machine may be shared)."""
    best = float("inf")
    for _ in range(repeat):
        started = time.process_time()
        func()
        best = min(best, time.process_time() - started)
    return best


def speed() -> None:
    sources = "".join((ROOT / p).read_text() for p in _git("ls-files", "src").split() if p.endswith(".py"))
    big = {
        "python source": (sources * 3)[: 1 << 20],
        "unified diff": (_git("diff", _git("rev-list", "--max-parents=0", "HEAD").split()[0], "HEAD") * 2)[
            : 1 << 20
        ],
        "git log": (_git("log") * 100)[: 1 << 20],
        "csv": _csv(20000)[: 1 << 20],
        "log": _log(20000)[: 1 << 20],
        "markdown": ((ROOT / "README.md").read_text() * 130)[: 1 << 20],
        "prose (no format)": " ".join(f"word{i % 977} and{i % 13}" for i in range(200000))[: 1 << 20],
    }
    terms = ("recover", "budget", "shrink")  # a call's query terms: matching lines are ranked first
    print(f"\n{'1 MB of':<20} {'head+tail ms':>13} {'outline ms':>11} {'with query':>11} {'strategy':<24}")
    for name, text in big.items():
        mb = len(text) / (1 << 20)
        before = _timed(lambda text=text: _preview(text, 20000, outlines=False)) / mb
        after = _timed(lambda text=text: _preview(text, 20000, outlines=True)) / mb
        query = _timed(lambda text=text: _preview(text, 20000, outlines=True, terms=terms)) / mb
        result = shrink_texts([text], 20000, HINT)
        strategy = result.report.strategy if result else "-"
        print(f"{name:<20} {before * 1000:>13.1f} {after * 1000:>11.1f} {query * 1000:>11.1f} {strategy:<24}")


if __name__ == "__main__":
    coverage("--verbose" in sys.argv)
    speed()
