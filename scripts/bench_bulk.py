"""Time the 200 KB JSON call alone: direct, through mcp-compressor and through `wrap`, interleaved.

`bench_session.py` runs the same call after a whole session; this runs only it, in more rounds, so the
ratio to the anchor's added latency is steadier on a shared machine. `--base DIR` adds the same `wrap`
configurations run from another source tree (e.g. `/work/main/src`) for a before/after in one run.
Usage: `python scripts/bench_bulk.py --rounds 6 --calls 8 [--base DIR]`.
"""

from __future__ import annotations

import argparse
import compileall
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_session as bs


def _ours(name: str, extra: list[str], src: Path) -> bs.Configuration:
    def wrap(server: bs.Server, workdir: Path) -> list[str]:
        return [
            sys.executable, "-m", "mcpsqueeze.cli", "wrap", "--budget", "20000", *extra,
            "--name", server.name, "--recovery-dir", str(workdir / "recovery"),
            "--stats-file", str(workdir / f"stats-{server.name}.jsonl"), "--", *server.argv,
        ]  # fmt: skip

    return bs.Configuration(name, wrap, src=src)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--calls", type=int, default=8)
    parser.add_argument("--size", type=int, default=200_000)
    parser.add_argument("--base", type=Path, help="another source tree to compare, e.g. /work/main/src")
    args = parser.parse_args(argv)
    here = bs.ROOT / "src"
    base = bs.configurations(20000)
    configs = [base[0], base[1]]
    trees = [("", here)] + ([("BASE ", args.base)] if args.base else [])
    for label, src in trees:
        compileall.compile_dir(str(src), quiet=1)
        configs.append(_ours(f"{label}wrap (default)", [], src))
        configs.append(_ours(f"{label}wrap --shrink-above off", ["--shrink-above", "off"], src))
    workdir = Path(tempfile.mkdtemp(prefix="bench-bulk-"))
    times: dict[str, list[float]] = {c.name: [] for c in configs}
    try:
        for round_no in range(args.rounds):
            shift = round_no % len(configs)
            for config in configs[shift:] + configs[:shift]:
                times[config.name] += bs.run_bulk(config, workdir, round_no, args.size, args.calls)
            print(f"round {round_no + 1}/{args.rounds} done", file=sys.stderr)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    direct = statistics.median(times["direct"]) * 1000
    anchor = statistics.median(times[configs[1].name]) * 1000 - direct
    print(f"== {args.size // 1000} KB JSON, {args.rounds} rounds x {args.calls} calls, medians (ms)")
    for config in configs:
        median = statistics.median(times[config.name]) * 1000
        added = median - direct
        ratio = f"{added / anchor:5.2f}x" if config is not configs[0] else ""
        print(f"  {config.name:40} {median:7.1f}   added {added:+7.1f}   {ratio}")


if __name__ == "__main__":
    main()
