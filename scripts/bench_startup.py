"""Start-up of `mcpsqueeze wrap`: spawn to the first `initialize` answer, directly, through mcp-compressor
and through mcpsqueeze (this tree, and optionally a baseline git ref of it), in one interleaved run.

Three cases, each spawned the way an agent spawns its servers and sent `initialize` at once:
  instant  the stdlib `python -m mcpsqueeze.demo.bulk`, which answers at once: our own start-up alone
  fs       npm `server-filesystem` alone
  three    `server-filesystem`, PyPI `mcp-server-git` and npm `server-memory` spawned at the same moment
Rounds rotate the order of the configurations so drift hits all equally. Printed per case and
configuration: median (min-max) milliseconds from spawn to the answer, and the ratio ours/anchor.

    python scripts/bench_startup.py [--rounds 5] [--baseline main] [--tree SRC] [--cases instant,fs,three]

`--baseline REF` also runs `git archive REF src` (bytecode compiled) as "REF", side by side; `--tree SRC`
runs another source directory (an experiment) the same way. Both may be repeated.
The servers, the anchor's invocation and the raw client are bench_session.py's.
"""

from __future__ import annotations

import argparse
import compileall
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_session import COMPRESSOR, ROOT, Configuration, Peer, Server, _env, _repo, configurations, servers

CASES = ("instant", "fs", "three")


@dataclass(frozen=True)
class Contender:
    """A configuration and the PYTHONPATH its processes get (the tree of mcpsqueeze they run)."""

    name: str
    config: Configuration
    env: dict[str, str]


def contenders(budget: int, workdir: Path, baselines: list[str], trees: list[Path]) -> list[Contender]:
    direct, anchor, ours = configurations(budget)[:3]
    env = _env()
    found = [Contender("direct", direct, env), Contender("anchor", anchor, env), Contender("ours", ours, env)]
    for ref in baselines:
        tree = workdir / f"baseline-{len(found)}"
        tree.mkdir()
        archive = subprocess.run(
            ["git", "-C", str(ROOT), "archive", ref, "src"], check=True, capture_output=True
        )
        subprocess.run(["tar", "-x", "-C", str(tree)], input=archive.stdout, check=True)
        compileall.compile_dir(str(tree / "src"), quiet=1)
        found.append(Contender(ref, ours, {**env, "PYTHONPATH": str(tree / "src")}))
    for path in trees:
        compileall.compile_dir(str(path), quiet=1)
        found.append(Contender(str(path), ours, {**env, "PYTHONPATH": str(path)}))
    return found


def case_servers(case: str, repo: Path, workdir: Path, index: int) -> list[Server]:
    if case == "instant":
        return [Server("bulk", (sys.executable, "-m", "mcpsqueeze.demo.bulk"))]
    real = servers(repo, workdir, index)
    return real[:1] if case == "fs" else real


def spawn_to_answer(
    contender: Contender, backends: list[Server], workdir: Path
) -> dict[str, tuple[float, float]]:
    """Per server: milliseconds from spawning each proxy (all at once) to its `initialize` answer, and to
    the answer of the `tools/list` it is sent right after that (what an agent waits for before a call)."""
    peers = {
        s.name: Peer(contender.config.wrap(s, workdir), {**contender.env, **s.env}, workdir) for s in backends
    }
    for peer in peers.values():
        peer.send_initialize()
    figures: dict[str, tuple[float, float]] = {}

    def handshake(name: str, peer: Peer) -> None:
        answered = peer.initialize(sent=True)
        peer.request("tools/list", {})
        figures[name] = (answered * 1000, (time.perf_counter() - peer.started) * 1000)

    threads = [threading.Thread(target=handshake, args=item) for item in peers.items()]
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        missing = set(peers) - set(figures)
        if missing:
            raise RuntimeError(f"no answers from {', '.join(sorted(missing))} ({contender.name})")
        return figures
    finally:
        for peer in peers.values():
            peer.close()


def _settle() -> None:
    """Let the backends of the proxies just closed exit too (their CPU would land on the next spawn)."""
    time.sleep(0.2)


def run(
    rounds: int, cases: list[str], people: list[Contender], repo: Path, workdir: Path
) -> dict[tuple[str, str, str], list[float]]:
    """(case, contender, server) -> the milliseconds of every round."""
    samples: dict[tuple[str, str, str], list[float]] = {}
    for round_no in range(rounds):
        for case in cases:
            shift = (round_no + cases.index(case)) % len(people)
            for index, contender in enumerate(people[shift:] + people[:shift]):
                backends = case_servers(case, repo, workdir, round_no * 10 + index)
                for name, (answered, listed) in spawn_to_answer(contender, backends, workdir).items():
                    samples.setdefault((case, contender.name, name), []).append(answered)
                    samples.setdefault((case + " (tools/list)", contender.name, name), []).append(listed)
                _settle()
        print(f"round {round_no + 1}/{rounds} done", file=sys.stderr)
    return samples


def report(
    samples: dict[tuple[str, str, str], list[float]], cases: list[str], people: list[Contender]
) -> None:
    names = [c.name for c in people]
    width = max(len(n) for n in names) + 8
    rounds = len(next(iter(samples.values())))
    print(f"\n== start-up: spawn to the answer, ms: median (min-max) of {rounds} rounds")
    for case in [t for c in cases for t in (c, c + " (tools/list)")]:
        backends = sorted(
            {s for (c, _, s) in samples if c == case}, key=["bulk", "fs", "git", "memory"].index
        )
        what = (
            "tools/list answered (sent after the initialize answer)" if "(" in case else "initialize answered"
        )
        print(f"\n{case.split()[0]}: {what}")
        print(" " * width + "".join(f"{b:>20}" for b in backends))
        medians: dict[tuple[str, str], float] = {}
        for name in names:
            cells = []
            for backend in backends:
                values = samples[(case, name, backend)]
                medians[(name, backend)] = statistics.median(values)
                cells.append(f"{statistics.median(values):.0f} ({min(values):.0f}-{max(values):.0f})")
            print(f"{name:<{width}}" + "".join(f"{cell:>20}" for cell in cells))
        for name in names[2:]:
            ratios = "".join(f"{medians[(name, b)] / medians[('anchor', b)]:>20.2f}" for b in backends)
            print(f"{name + '/anchor':<{width}}" + ratios)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--budget", type=int, default=20000)
    parser.add_argument(
        "--baseline", metavar="REF", action="append", default=[], help="also run this git ref's src/ (main)"
    )
    parser.add_argument(
        "--tree", metavar="SRC", type=Path, action="append", default=[], help="also run this src/ directory"
    )
    parser.add_argument("--cases", default=",".join(CASES), help=f"comma-separated, of {', '.join(CASES)}")
    args = parser.parse_args(argv)
    if not COMPRESSOR.exists():
        sys.exit(f"mcp-compressor not found at {COMPRESSOR}; see bench_session.py's docstring")
    cases = [c for c in args.cases.split(",") if c]
    if unknown := set(cases) - set(CASES):
        sys.exit(f"unknown cases: {', '.join(sorted(unknown))}")
    compileall.compile_dir(str(ROOT / "src"), quiet=1)  # as installed: bytecode compiled
    workdir = Path(tempfile.mkdtemp(prefix="bench-startup-"))
    try:
        people = contenders(args.budget, workdir, args.baseline, args.tree)
        repo = _repo(workdir) if set(cases) - {"instant"} else workdir
        report(run(args.rounds, cases, people, repo, workdir), cases, people)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
