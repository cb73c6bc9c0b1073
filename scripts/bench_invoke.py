#!/usr/bin/env python3
"""Added latency of `<server>_invoke_tool` (issue 22: at most 0.3 ms at the median over plain `wrap`).

    python scripts/bench_invoke.py [--n 2000] [--level medium] [--backend fast|demo]

Two `mcpsqueeze wrap` processes over one stdio backend each, one plain and one with `--compress-tools
LEVEL`, both with their defaults otherwise. The backend is a hand-written stdlib one by default
(tests/proxy/changing_backend.py, ~0.1 ms per answer, so the proxy's own time is what shows; `demo` is
the bundled MCPServer demo, ~10 ms). A raw JSON-RPC client (no SDK on either side) calls the same small
tool in both, INTERLEAVED (plain, invoke, plain, invoke...; which goes first alternates), so load on this
shared machine falls on both alike, with fresh arguments each call (so dedup never fires): directly in
the plain one, and through `server_invoke_tool` in the other. Prints
each side's median and p90 round trip and the added latency at the median, with the median of the
pairwise differences beside it.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from rawclient import ROOT, RawClient, cli, demo_server

TARGET_MS = 0.3
FAST = [sys.executable, str(ROOT / "tests" / "proxy" / "changing_backend.py")]


def _once(client: RawClient, name: str, arguments: dict[str, object]) -> float:
    started = time.perf_counter()
    answer = client.request("tools/call", {"name": name, "arguments": arguments})
    took = (time.perf_counter() - started) * 1000
    assert "result" in answer, answer
    return took


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[1])
    parser.add_argument("--n", type=int, default=2000, help="calls per side")
    parser.add_argument("--level", default="medium", choices=["low", "medium", "high", "max"])
    parser.add_argument("--backend", default="fast", choices=["fast", "demo"])
    args = parser.parse_args()
    backend = FAST if args.backend == "fast" else demo_server()
    tool, arg = ("tool_1", "n") if args.backend == "fast" else ("echo", "text")
    with tempfile.TemporaryDirectory() as tmp:
        wrap = ["wrap", "--recovery-dir", tmp, "--retention", "off"]
        plain_argv = cli(*wrap, "--", *backend)
        compact_argv = cli(*wrap, "--compress-tools", args.level, "--", *backend)
        with RawClient(plain_argv) as plain, RawClient(compact_argv) as compact:
            plain.initialize()
            compact.initialize()
            compact.result("tools/list")  # as an agent does first: the listing is known when calls come

            def run_plain(i: int) -> float:
                return _once(plain, tool, {arg: i if arg == "n" else f"hello {i}"})

            def run_invoke(i: int) -> float:
                invoke = {"tool_name": tool, "tool_input": {arg: i if arg == "n" else f"hello {i}"}}
                return _once(compact, "server_invoke_tool", invoke)

            for i in range(50):  # warm both
                run_plain(-i)
                run_invoke(-i)
            plain_ms: list[float] = []
            invoke_ms: list[float] = []
            for i in range(args.n):
                if i % 2:
                    plain_ms.append(run_plain(i))
                    invoke_ms.append(run_invoke(i))
                else:
                    invoke_ms.append(run_invoke(i))
                    plain_ms.append(run_plain(i))
    rows = ((f"plain wrap: {tool}", plain_ms), (f"--compress-tools {args.level}: invoke {tool}", invoke_ms))
    print(f"{'calls (' + str(args.n) + ' each, interleaved)':<44} {'median ms':>10} {'p90 ms':>8}")
    for label, samples in rows:
        p90 = statistics.quantiles(samples, n=10)[-1]
        print(f"{label:<44} {statistics.median(samples):>10.3f} {p90:>8.3f}")
    added = statistics.median(invoke_ms) - statistics.median(plain_ms)
    pairwise = statistics.median(b - a for a, b in zip(plain_ms, invoke_ms, strict=True))
    verdict = "met" if added <= TARGET_MS else "NOT met"
    print(f"added by invoke at the median: {added:+.3f} ms (pairwise median {pairwise:+.3f} ms); "
          f"target <= {TARGET_MS} ms: {verdict}")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
