"""Seed 000's jq recipe on the shell door: `mcpsq` output of a real `mcpsqueeze serve` session.

An object result is printed as the shrunk JSON itself, so the recipe finds `.truncation`; an array
keeps its type on stdout (so `| jq '.[0]'` works) and `--raw` prints its envelope, whose
`_meta.truncation` the recipe finds. The session runs with `--toonify` and `--truncate-chars`: shrunk
results stay JSON (seed 000's precedence) and no printed block is over the limit.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

from rawclient import RawClient, cli, demo_server
from seed_recipe import run_recipe


def _shim(env: dict[str, str], *argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mcpsqueeze.bash.shim", *argv],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_the_seeds_jq_recipe_works_on_mcpsq_output_for_objects_and_on_raw_output_for_arrays(
    tmp_path: Path,
) -> None:
    with RawClient(demo_server()) as direct:
        direct.initialize()
        issues = direct.call("search_issues", {"query": "seed"})
        rows = direct.call("list_rows", {"table": "raw"})
    socket = tmp_path / "run" / "s.sock"
    argv = cli(
        "serve", "--recovery-dir", str(tmp_path / "rec"), "--socket", str(socket), "--toonify",
        "--truncate-chars", "3000", "-n", "demo", "--", *demo_server(),
    )  # fmt: skip
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stderr is not None
        seen = ""
        while "session ready on" not in seen:
            line = proc.stderr.readline()
            assert line, seen + f"(serve exited with {proc.poll()})"
            seen += line
        env = {**os.environ, "MCPSQUEEZE_SOCKET": str(socket)}
        obj = _shim(env, "demo", "search-issues", "--query", "seed")
        arr = _shim(env, "demo", "list-rows", "--table", "t")
        raw = _shim(env, "demo", "list-rows", "--table", "raw", "--raw")  # not a repeat: not deduplicated
    finally:
        proc.send_signal(signal.SIGINT)
        proc.communicate(timeout=30)
    assert obj.returncode == 0 and len(obj.stdout) <= 3001, obj  # the limit, plus the final newline
    assert "truncation" in json.loads(obj.stdout)
    assert run_recipe(tmp_path, obj.stdout) == issues["content"]
    assert arr.returncode == 0 and isinstance(json.loads(arr.stdout), list)
    envelope = json.loads(raw.stdout)
    assert all(len(b["text"]) <= 3000 for b in envelope["content"])
    assert run_recipe(tmp_path, raw.stdout) == rows["content"]
