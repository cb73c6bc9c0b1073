"""A bounded loopback load test of `serve` + the real `mcpsq` shim: 200 shim processes at once.

Invariants: every call answered (0 lost), each with its own answer (0 mismatched), every shrunk
result recovered byte for byte with `mcpsq recover`. Figures are printed, never asserted on time.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

from test_serve_shim import _start  # tests/serve is on sys.path (no package)

from mcpsqueeze.demo import _data

CALLS = 200
BIG_EVERY = 10


def _expected_big(query: str) -> str:
    return json.dumps(_data.search_issues(query, 300), ensure_ascii=False)


def test_200_concurrent_shim_calls_lose_and_mix_up_nothing(tmp_path: Path) -> None:
    session = _start(tmp_path, "--socket", str(tmp_path / "run" / "s.sock"), "-n", "demo", "--", *sys.argv[:0],
                     sys.executable, "-m", "mcpsqueeze.demo.server")  # fmt: skip
    tally = {"tried": 0, "answered": 0, "mismatched": 0, "shrunk": 0, "recovered": 0, "lost": 0}
    shim = [sys.executable, "-m", "mcpsqueeze.bash.shim"]
    try:
        started = time.perf_counter()
        procs = []
        for i in range(CALLS):
            tag = f"c{i}"
            argv = (
                ["demo", "search-issues", "--query", tag]
                if i % BIG_EVERY == 0
                else ["demo", "echo", "--text", tag]
            )
            procs.append((i, tag, subprocess.Popen([*shim, *argv], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=session.env)))  # fmt: skip
        big: list[tuple[str, str]] = []
        for i, tag, proc in procs:
            tally["tried"] += 1
            try:
                out, _err = proc.communicate(timeout=120)
            except subprocess.TimeoutExpired:
                proc.kill()
                tally["lost"] += 1
                continue
            if proc.returncode != 0:
                tally["lost"] += 1
                continue
            tally["answered"] += 1
            if i % BIG_EVERY:
                tally["mismatched"] += out != tag  # exact: nothing added
                continue
            preview = json.loads(out)
            if preview.get("query") != tag or "truncation" not in preview:
                tally["mismatched"] += 1
                continue
            tally["shrunk"] += 1
            big.append((tag, preview["truncation"]["response_id"]))
        for tag, rid in big:
            back = subprocess.run(
                [*shim, "recover", rid], capture_output=True, text=True, env=session.env, timeout=60
            )
            if back.returncode == 0 and back.stdout == _expected_big(tag):  # byte for byte: no newline added
                tally["recovered"] += 1
            else:
                tally["mismatched"] += 1
        took = time.perf_counter() - started
    finally:
        session.stop()
    print(f"\nserve + mcpsq load: {tally} in {took:.1f} s")
    assert tally["tried"] == CALLS and tally["answered"] == CALLS
    assert tally["lost"] == 0 and tally["mismatched"] == 0
    assert tally["shrunk"] == tally["recovered"] == CALLS // BIG_EVERY
