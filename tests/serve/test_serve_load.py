"""A bounded loopback load test of `serve` and the shim: 200 `mcpsq` calls at once, each on its own thread
and its own connection to the session's Unix socket.

Invariants: every call answered (0 lost), each with its own answer (0 mismatched), every shrunk
result recovered byte for byte with `mcpsq recover`. Figures are printed, never asserted on time.
The serve and the shim's command run in this process (memwrap); the shim's own process is tested in
tests/bash/test_shim.py and, against a spawned serve, tests/serve/test_serve_shim.py.
"""

from __future__ import annotations

import json
import os
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from mcpsqueeze.demo import _data
from memwrap import Completed, Serve, mcpsq
from rawclient import demo_server

CALLS = 200
BIG_EVERY = 10


def _expected_big(query: str) -> str:
    return json.dumps(_data.search_issues(query, 300), ensure_ascii=False)


def test_200_concurrent_shim_calls_lose_and_mix_up_nothing(tmp_path: Path) -> None:
    socket = tmp_path / "run" / "s.sock"
    tally = {"tried": 0, "answered": 0, "mismatched": 0, "shrunk": 0, "recovered": 0, "lost": 0}
    args = [
        "--socket",
        str(socket),
        "--recovery-dir",
        str(tmp_path / "rec"),
        "-n",
        "demo",
        "--",
        *demo_server(),
    ]
    with Serve(args), ThreadPoolExecutor(CALLS) as pool:
        env = {**os.environ, "MCPSQUEEZE_SOCKET": str(socket)}
        started = time.perf_counter()

        def call(i: int) -> Completed:
            tag = f"c{i}"
            big = i % BIG_EVERY == 0
            return mcpsq(
                ["demo", "search-issues", "--query", tag] if big else ["demo", "echo", "--text", tag], env
            )

        done = list(pool.map(call, range(CALLS)))
        big: list[tuple[str, str]] = []
        for i, answer in enumerate(done):
            tag = f"c{i}"
            tally["tried"] += 1
            if answer.returncode != 0:
                tally["lost"] += 1
                continue
            tally["answered"] += 1
            if i % BIG_EVERY:
                tally["mismatched"] += answer.stdout != tag  # exact: nothing added
                continue
            preview = json.loads(answer.stdout)
            if preview.get("query") != tag or "truncation" not in preview:
                tally["mismatched"] += 1
                continue
            tally["shrunk"] += 1
            big.append((tag, preview["truncation"]["response_id"]))
        for tag, rid in big:
            back = mcpsq(["recover", rid], env)
            if back.returncode == 0 and back.stdout == _expected_big(tag):  # byte for byte: no newline added
                tally["recovered"] += 1
            else:
                tally["mismatched"] += 1
        took = time.perf_counter() - started
    print(f"\nserve + mcpsq load: {tally} in {took:.1f} s")
    assert tally["tried"] == CALLS and tally["answered"] == CALLS
    assert tally["lost"] == 0 and tally["mismatched"] == 0
    assert tally["shrunk"] == tally["recovered"] == CALLS // BIG_EVERY
