#!/usr/bin/env python3
"""Added latency of `mcpsqueeze wrap`: tools/call directly and through the proxy, in one run.

    python scripts/bench_proxy.py [--n 300]

Backend: the bundled demo server over stdio. Client: a raw JSON-RPC client (no SDK overhead on either side).
Cases: a small result (echo), and a ~200 KB result (search_issues with a fresh query each call so dedup
never fires) both relayed unchanged (--no-shrink --no-dedup) and shrunk to the default budget.
Prints medians and p90s side by side and the added latency at the median.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from rawclient import RawClient, cli, demo_server


def timed(client: RawClient, n: int, args: Callable[[int], tuple[str, dict[str, object]]]) -> list[float]:
    samples = []
    for i in range(n):
        tool, arguments = args(i)
        started = time.perf_counter()
        client.call(tool, arguments)
        samples.append((time.perf_counter() - started) * 1000)
    return samples


def run(argv: list[str], n: int, big_n: int) -> dict[str, list[float]]:
    with RawClient(argv) as client:
        client.initialize()
        timed(client, 20, lambda i: ("echo", {"text": f"warm {i}"}))
        timed(client, 3, lambda i: ("search_issues", {"query": f"warm {i}"}))
        return {
            "small": timed(client, n, lambda i: ("echo", {"text": f"hello {i}"})),
            "200KB": timed(client, big_n, lambda i: ("search_issues", {"query": f"q{i}", "limit": 250})),
        }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[1])
    parser.add_argument("--n", type=int, default=300, help="small calls per configuration")
    parser.add_argument("--big-n", type=int, default=40, help="200 KB calls per configuration")
    args = parser.parse_args()
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        wrap = ["wrap", "--recovery-dir", tmp, "--retention", "off"]
        configs = {
            "direct": demo_server(),
            "proxy (relay only)": cli(*wrap, "--no-shrink", "--no-dedup", "--", *demo_server()),
            "proxy (defaults)": cli(*wrap, "--", *demo_server()),
        }
        results = {name: run(argv, args.n, args.big_n) for name, argv in configs.items()}
    base = results["direct"]
    print(f"{'configuration':<22} {'case':<6} {'median ms':>10} {'p90 ms':>8} {'added ms (median)':>18}")
    for name, cases in results.items():
        for case, samples in cases.items():
            median = statistics.median(samples)
            p90 = statistics.quantiles(samples, n=10)[-1]
            added = median - statistics.median(base[case])
            print(f"{name:<22} {case:<6} {median:>10.3f} {p90:>8.3f} {added:>18.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
