"""How long `wrap` takes to exit after one big result, and whether its summary is exact.

Spawns `mcpsqueeze wrap --budget 20000 -- python -m mcpsqueeze.demo.bulk` (a stdlib server), sends
`initialize`, one `blob(size=...)` call (50 MB by default), closes stdin like a leaving agent and
prints the seconds from the close to the exit, with the call's own latency. The summary's `tokens
before` must equal a direct tiktoken count (`encode_ordinary`) of the same text; the run says so.

    python scripts/bench_exit.py [--size 50000000] [--rounds 3] [--src PATH ...]

Each `--src` is a source tree (a `src/` directory holding `mcpsqueeze`; default: this tree's) run in
the same rounds, interleaved and in rotating order, so load on the machine hits all alike: compare the
figures within one run (and their ratios), not across runs.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_session as bs  # (it puts this tree's src/ on the path too)


def _env(src: Path, pycache: Path) -> dict[str, str]:
    # Bytecode of each tree goes to its own prefix: an installed package has it compiled already, and a
    # tree that is not ours must not get __pycache__ directories written into it.
    return {**os.environ, "PYTHONPATH": str(src), "PYTHONPYCACHEPREFIX": str(pycache)}


def one_exit(src: Path, pycache: Path, size: int, seed: int, workdir: Path) -> dict[str, Any]:
    """One spawn: initialize, one blob call, close stdin. The figures and the summary's counts."""
    stats = workdir / f"stats-{time.monotonic_ns()}.jsonl"
    argv = [
        sys.executable, "-m", "mcpsqueeze.cli", "wrap", "--budget", "20000", "--stats-file", str(stats),
        "--", sys.executable, "-m", "mcpsqueeze.demo.bulk",
    ]  # fmt: skip
    peer = bs.Peer(argv, _env(src, pycache), workdir)
    try:
        peer.initialize()
        call, answer = peer.request("tools/call", {"name": "blob", "arguments": {"size": size, "seed": seed}})
        assert "result" in answer, str(answer)[:500]
        del answer
    except BaseException:
        peer.proc.kill()
        raise
    exit_seconds, stderr = peer.close()
    rows = [json.loads(line) for line in stats.read_text().splitlines()] if stats.exists() else []
    return {
        "call": call,
        "exit": exit_seconds,
        "tokens_before": bs.summary_counts(stderr).get("tokens before"),
        "line_tokens_before": rows[0]["tokens_before"] if rows else None,
        "stderr_tail": stderr[-600:],
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=50_000_000, help="characters of JSON in the one result")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--src", type=Path, action="append", help="a source tree to run (repeatable; default this tree's)"
    )
    args = parser.parse_args(argv)
    sources = [p.resolve() for p in args.src or [bs.ROOT / "src"]]
    for src in sources:
        if not (src / "mcpsqueeze" / "__init__.py").exists():
            sys.exit(f"{src} holds no mcpsqueeze package: pass the src/ directory of a tree")

    from mcpsqueeze.accounting._tokens import count_tokens
    from mcpsqueeze.demo.bulk import blob

    started = time.perf_counter()
    expected = count_tokens(blob(args.size, args.seed))  # the text block is the whole result text
    took = time.perf_counter() - started
    print(f"direct tiktoken count of blob({args.size:,}): {expected:,} tokens ({took:.1f} s)")

    results: dict[Path, list[dict[str, Any]]] = {src: [] for src in sources}
    with tempfile.TemporaryDirectory(prefix="bench-exit-") as tmp:
        workdir = Path(tmp)
        caches = {src: workdir / f"pycache-{i}" for i, src in enumerate(sources)}
        for src in sources:  # warm-up: compile each tree's bytecode once, outside the figures
            one_exit(src, caches[src], 1000, args.seed, workdir)
        for round_no in range(args.rounds):
            shift = round_no % len(sources)
            for src in sources[shift:] + sources[:shift]:
                figures = one_exit(src, caches[src], args.size, args.seed, workdir)
                results[src].append(figures)
                exact = figures["tokens_before"] == expected == figures["line_tokens_before"]
                print(
                    f"round {round_no + 1}  {src}: call {figures['call']:.2f} s, "
                    f"exit {figures['exit']:.2f} s, "
                    f"summary tokens before {figures['tokens_before']} ({'exact' if exact else 'NOT EXACT'})",
                    flush=True,
                )
                if not exact:
                    print(figures["stderr_tail"])
    print("\n== exit after one result (stdin closed -> process gone), medians")
    base = None
    for src, runs in results.items():
        exits = [r["exit"] for r in runs]
        median = statistics.median(exits)
        base = base or median
        good = sum(r["tokens_before"] == expected for r in runs)
        print(
            f"  {src}: exit median {median:.2f} s (min {min(exits):.2f}, max {max(exits):.2f}), "
            f"call median {statistics.median(r['call'] for r in runs):.2f} s, "
            f"ratio to the first {median / base:.2f}x, summary exact in {good}/{len(runs)}"
        )


if __name__ == "__main__":
    main()
