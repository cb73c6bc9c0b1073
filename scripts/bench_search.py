#!/usr/bin/env python3
"""Time of recover's grep and search on 1 MB (issue 21 item 2: grep's time is bounded on hostile patterns).

    python scripts/bench_search.py

grep (core/_search.py, RE2) with patterns that make a backtracking engine take exponential time, on 1 MB
of one line and on 1 MB of 100-character lines; then grep and BM25 search on 1 MB of the demo server's
prose; and, for scale, Python's re with ``(a+)+$`` on 25 characters. Prints milliseconds (best of 3).
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable

from mcpsqueeze.core._search import grep, search
from mcpsqueeze.demo import _data

HOSTILE = (r"(a+)+$", r"(.*a){100}", r"(\w*\w*\w*){30}$", r"(a|aa)+$")


def best_ms(run: Callable[[], object], repeat: int = 3) -> float:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        run()
        times.append(time.perf_counter() - started)
    return 1000 * min(times)


def main() -> None:
    texts = {"1 MB, one line": "a" * 1_000_000 + "b", "1 MB, 100-char lines": ("a" * 99 + "b\n") * 10_000}
    print("| text | grep | ms | matching lines |\n|---|---|---:|---:|")
    for name, text in texts.items():
        for pattern in HOSTILE:
            found = grep(text, pattern)
            ms = best_ms(lambda t=text, p=pattern: grep(t, p))
            print(f"| {name} | `{pattern}` | {ms:.1f} | {found.total:,} |")
    prose = _data.prose("notes.txt") * 17
    size = f"{len(prose) / 1e6:.1f} MB of prose"
    print(
        f"| {size} | grep `proxy` -i | {best_ms(lambda: grep(prose, 'proxy', ignore_case=True)):.1f} | "
        f"{grep(prose, 'proxy', ignore_case=True).total:,} |"
    )
    print(
        f"| {size} | search `proxy cache` | {best_ms(lambda: search(prose, 'proxy cache')):.1f} | "
        f"{search(prose, 'proxy cache').total:,} |"
    )
    slow = best_ms(lambda: re.search(r"(a+)+$", "a" * 24 + "b"), repeat=1)
    print(f"| 25 characters | Python re `(a+)+$` | {slow:.1f} | - |")


if __name__ == "__main__":
    main()
