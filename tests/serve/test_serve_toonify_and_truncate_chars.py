"""The seed tools' flags on the shell door: one real `serve --toonify --truncate-chars 3000` session.

- Seed 000's jq recipe on `mcpsq` output: an object result is printed as the shrunk JSON itself, so the
  recipe finds `.truncation`; an array keeps its type on stdout (so `| jq '.[0]'` works) and `--raw`
  prints its envelope, whose `_meta.truncation` the recipe finds. Shrunk results stay JSON although
  `--toonify` is on (seed 000's precedence), and no printed block is over the limit.
- `--toonify`: a JSON result under the budget is printed as TOON with one notice line on stderr, and
  `mcpsq recover` prints the backend's own JSON bytes.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import toon_format

from rawclient import ROOT, RawClient, cli, demo_server, serve_ready
from seed_recipe import run_recipe

RECORDS = [sys.executable, str(ROOT / "tests" / "fixtures" / "records_server.py")]
Shim = Callable[..., subprocess.CompletedProcess[str]]


@pytest.fixture(scope="module")
def mcpsq(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Shim]:
    """Run `mcpsq ARGS` against the session (servers `demo` and `records`)."""
    tmp = tmp_path_factory.mktemp("seedflags")
    config = tmp / "servers.json"
    servers = {"demo": demo_server(), "records": RECORDS}
    config.write_text(
        json.dumps({"mcpServers": {k: {"command": v[0], "args": v[1:]} for k, v in servers.items()}})
    )
    socket = tmp / "run" / "s.sock"
    argv = cli(
        "serve", "--recovery-dir", str(tmp / "rec"), "--socket", str(socket), "--config", str(config),
        "--toonify", "--truncate-chars", "3000",
    )  # fmt: skip
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    env = {**os.environ, "MCPSQUEEZE_SOCKET": str(socket)}

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        shim = [sys.executable, "-m", "mcpsqueeze.bash.shim", *args]
        return subprocess.run(shim, env=env, capture_output=True, text=True, timeout=60)

    try:
        assert proc.stderr is not None
        serve_ready(proc)
        yield run
    finally:
        proc.send_signal(signal.SIGINT)
        proc.communicate(timeout=30)


def test_the_seeds_jq_recipe_works_on_mcpsq_output_for_objects_and_on_raw_output_for_arrays(
    mcpsq: Shim, tmp_path: Path, demo_direct: RawClient
) -> None:
    issues = demo_direct.call("search_issues", {"query": "seed"})
    rows = demo_direct.call("list_rows", {"table": "raw"})
    obj = mcpsq("demo", "search-issues", "--query", "seed")
    arr = mcpsq("demo", "list-rows", "--table", "t")
    raw = mcpsq("demo", "list-rows", "--table", "raw", "--raw")  # not a repeat: not deduplicated
    assert obj.returncode == 0 and len(obj.stdout) <= 3001, obj  # the limit, plus the final newline
    assert "truncation" in json.loads(obj.stdout)
    assert run_recipe(tmp_path, obj.stdout) == issues["content"]
    assert arr.returncode == 0 and isinstance(json.loads(arr.stdout), list)
    envelope = json.loads(raw.stdout)
    assert all(len(b["text"]) <= 3000 for b in envelope["content"])
    assert run_recipe(tmp_path, raw.stdout) == rows["content"]


def test_mcpsq_prints_a_toonified_result_with_a_notice_and_recover_prints_the_original_json(
    mcpsq: Shim,
) -> None:
    shown = mcpsq("records", "get-records", "--n", "12")  # under the 3000 limit
    note = mcpsq("records", "get-note")
    found = re.search(r"mcpsq recover ([0-9a-f]{32})", shown.stderr)
    assert found is not None, shown
    original = mcpsq("recover", found.group(1))
    assert shown.returncode == 0 and shown.stdout.startswith(
        "[12]{id,name,email,role,active,score,created_at}:"
    )
    assert shown.stderr.startswith("mcpsqueeze: Shown as TOON (") and shown.stderr.count("\n") == 1
    rows = json.loads(original.stdout)
    assert toon_format.loads(shown.stdout) == rows and len(rows) == 12
    assert original.stdout == json.dumps(rows, indent=2)  # the backend's own bytes, no newline added
    assert note.stdout.startswith("Records are exported nightly") and note.stderr == ""
