"""Does a preview show what matters? The fact set (tests/factset) scored through the Python API.

Run: ``python scripts/bench_facts.py [--seed N] [--baseline REV] [--verbose] [--dump DIR]``.

62 outputs of five kinds (prose, HTML pages, JSON record lists, logs, CSV/TSV tables), each hiding one
fact a question asks for, are presented by a ``Squeezer`` at its defaults. Per kind and in all: how
many answers are visible in the preview, how many one ``search`` recover call with the question's words
finds, how many need more, and the cost (o200k tokens seen + 1,000 per extra round trip;
tests/factset/_score.py). ``--baseline REV`` scores another commit's ``src/`` in the same run, side by
side (its tree is extracted with ``git archive`` into a temporary directory).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _run(src: Path, seed: int, verbose: bool, dump: Path | None) -> dict[str, object]:
    """Score with mcpsqueeze imported from ``src``, in this process."""
    sys.path.insert(0, str(src))
    sys.path.insert(1, str(ROOT / "tests"))
    from factset import build
    from factset._score import score

    totals, scored = score(build(seed))
    if dump is not None:
        dump.mkdir(parents=True, exist_ok=True)
        for i, one in enumerate(scored):
            name = f"{i:02d}-{one.case.kind}-{one.case.generator}-{one.outcome}.txt"
            (dump / name).write_text(
                f"Q: {one.case.question}\nA: {one.case.answer}\n\n{one.preview}", encoding="utf-8"
            )
    if verbose:
        for one in scored:
            case = one.case
            print(f"{case.name:24} {one.outcome:7} {one.preview_tokens:6} {one.cost:6}  {case.answer[:40]}")
    return {"table": totals.table(), "cost": totals.cost, "visible": totals.visible, "more": totals.more}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--seed", type=int, default=0, help="the fact set's seed (0: the one the tests assert on)"
    )
    parser.add_argument("--baseline", help="also score this commit's src/, side by side")
    parser.add_argument("--src", type=Path, default=ROOT / "src", help=argparse.SUPPRESS)
    parser.add_argument("--json", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--verbose", action="store_true", help="one line per output")
    parser.add_argument("--dump", type=Path, help="write each preview (with its question) to this directory")
    args = parser.parse_args()
    if args.json:  # a baseline's run, in its own process
        print(json.dumps(_run(args.src, args.seed, False, None)))
        return 0
    if args.baseline:
        with tempfile.TemporaryDirectory(prefix="bench-facts-") as tmp:
            archive = subprocess.run(
                ["git", "-C", str(ROOT), "archive", args.baseline, "src"], capture_output=True, check=True
            ).stdout
            subprocess.run(["tar", "-x", "-C", tmp], input=archive, check=True)
            done = subprocess.run(
                [
                    sys.executable,
                    __file__,
                    "--json",
                    "--seed",
                    str(args.seed),
                    "--src",
                    str(Path(tmp) / "src"),
                ],
                capture_output=True,
                text=True,
                check=True,
            )
        base = json.loads(done.stdout)
        print(f"== baseline {args.baseline}\n{base['table']}\n")
    ours = _run(args.src, args.seed, args.verbose, args.dump)
    print(f"== this tree\n{ours['table']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
