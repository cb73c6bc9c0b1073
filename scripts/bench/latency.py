"""Latency side by side with the anchor: the replayed session directly, through mcp-compressor and through
``wrap`` (from each tree), interleaved round by round; then a 200 KB JSON result (the stdlib
``mcpsqueeze.demo.bulk`` server) shrunk to the default budget, timed over calls that follow a warm-up.

Figures per route: every call's latency (median, p90), the session's total (median of the rounds'
sums), the first call to each server, start-up (spawn to the ``initialize`` answer) and the 200 KB
call; then what each proxy adds over direct, and ours against the anchor (added median and added session
total as a share of the anchor's) and against direct (first call per server).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
from pathlib import Path
from typing import Any

from ._harness import Peer, Tree, progress, ratio, rotations, spread
from .replay import Route, Server, anchor, direct, ours, replayed, served_repo


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--rounds", type=int, default=3, help="interleaved rounds (default 3)")
    parser.add_argument("--bulk-calls", type=int, default=8, help="200 KB calls per route and round")
    parser.add_argument(
        "--pause", type=float, default=1.0, help="seconds between the listing and the first call"
    )


def _bulk(route: Route, workdir: Path, round_no: int, calls: int) -> list[float]:
    server = Server("bulk", (sys.executable, "-m", "mcpsqueeze.demo.bulk"))
    peer = Peer(route.argv(server, workdir), {**os.environ, **route.env}, workdir)
    try:
        peer.send_initialize()
        peer.initialized()
        times = []
        for n in range(calls + 1):
            params = route.call("bulk", "blob", {"size": 200_000, "seed": round_no * 1000 + n})
            took, answer = peer.request("tools/call", params)
            assert "result" in answer, answer
            times += [took * 1000] if n else []  # the first call warms the process up
        return times
    finally:
        peer.close()


def run(args: argparse.Namespace, trees: list[Tree], workdir: Path) -> dict[str, Any]:
    repo = served_repo(workdir)
    routes = [direct(), anchor(), *(ours(tree) for tree in trees)]
    if not routes[1].available:
        raise SystemExit(
            f"mcp-compressor is not installed at {routes[1].needs} (see python -m scripts.bench -h)"
        )
    calls: dict[str, list[float]] = {r.name: [] for r in routes}
    totals: dict[str, list[float]] = {r.name: [] for r in routes}
    firsts: dict[str, dict[str, list[float]]] = {r.name: {} for r in routes}
    startup: dict[str, dict[str, list[float]]] = {r.name: {} for r in routes}
    bulk: dict[str, list[float]] = {r.name: [] for r in routes}
    for round_no, order in rotations(list(enumerate(routes)), args.rounds):
        for index, route in order:
            with replayed(route, repo, workdir, index, pause=args.pause) as replay:
                failed = [c.index for c in replay.calls if "error" in c.result]
                assert not failed, f"{route.name}: calls {failed} failed"
                calls[route.name] += [c.seconds * 1000 for c in replay.calls]
                totals[route.name].append(sum(c.seconds for c in replay.calls) * 1000)
                for c in replay.calls:
                    if c.first:
                        firsts[route.name].setdefault(c.server, []).append(c.seconds * 1000)
                for server, seconds in replay.startup.items():
                    startup[route.name].setdefault(server, []).append(seconds * 1000)
            bulk[route.name] += _bulk(route, workdir, round_no, args.bulk_calls)
        progress(f"round {round_no + 1} of {args.rounds} done")
    figures: dict[str, Any] = {"routes": {}, "added": {}, "ours": {}}
    for route in routes:
        name = route.name
        figures["routes"][name] = {
            "call ms": spread(calls[name]),
            "session total ms": round(statistics.median(totals[name]), 1),
            "first call ms": {s: round(statistics.median(v), 2) for s, v in firsts[name].items()},
            "start-up ms": {s: round(statistics.median(v), 1) for s, v in startup[name].items()},
            "200 KB call ms": spread(bulk[name]),
        }
    plain = figures["routes"][routes[0].name]
    for route in routes[1:]:
        mine = figures["routes"][route.name]
        figures["added"][route.name] = {
            "median ms": round(mine["call ms"]["median"] - plain["call ms"]["median"], 2),
            "p90 ms": round(mine["call ms"]["p90"] - plain["call ms"]["p90"], 2),
            "session total ms": round(mine["session total ms"] - plain["session total ms"], 1),
            "200 KB call ms": round(mine["200 KB call ms"]["median"] - plain["200 KB call ms"]["median"], 2),
        }
    theirs = figures["added"][routes[1].name]
    for route in routes[2:]:
        added = figures["added"][route.name]
        # a share of what the anchor adds, while it adds something (under load, direct can be the slowest)
        share = {k: ratio(v, theirs[k]) if theirs[k] > 0 else None for k, v in added.items()}
        figures["ours"][route.name] = {
            "added median / anchor's": share["median ms"],
            "added session total / anchor's": share["session total ms"],
            "added 200 KB call / anchor's": share["200 KB call ms"],
            "first call / direct's": {
                s: ratio(v, plain["first call ms"][s])
                for s, v in figures["routes"][route.name]["first call ms"].items()
            },
        }
    return figures
