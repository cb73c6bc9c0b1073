"""`serve --toonify`: a JSON result under the budget is printed by `mcpsq` as TOON with one notice line on
stderr, and `mcpsq recover` prints the backend's own JSON bytes. (mcp-compressor's recipe on `mcpsq`
output under `--toonify --truncate-chars`: tests/bash/test_recover_recipes.py.)"""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path

import toon_format

from memwrap import Serve, mcpsq
from rawclient import ROOT

RECORDS = [sys.executable, str(ROOT / "tests" / "fixtures" / "records_server.py")]


def test_mcpsq_prints_a_toonified_result_with_a_notice_and_recover_prints_the_original_json(
    tmp_path: Path,
) -> None:
    socket = tmp_path / "run" / "s.sock"
    args = ["--recovery-dir", str(tmp_path / "rec"), "--socket", str(socket), "--toonify"]
    with Serve([*args, "--truncate-chars", "3000", "-n", "records", "--", *RECORDS]):
        env = {**os.environ, "MCPSQUEEZE_SOCKET": str(socket)}
        shown = mcpsq(["records", "get-records", "--n", "12"], env)  # under the 3000 limit
        note = mcpsq(["records", "get-note"], env)
        found = re.search(r"mcpsq recover ([0-9a-f]{32})", shown.stderr)
        assert found is not None, shown
        original = mcpsq(["recover", found.group(1)], env)
    assert shown.returncode == 0 and shown.stdout.startswith(
        "[12]{id,name,email,role,active,score,created_at}:"
    )
    assert shown.stderr.startswith("mcpsqueeze: Shown as TOON (") and shown.stderr.count("\n") == 1
    rows = json.loads(original.stdout)
    assert toon_format.loads(shown.stdout) == rows and len(rows) == 12
    assert original.stdout == json.dumps(rows, indent=2)  # the backend's own bytes, no newline added
    assert note.stdout.startswith("Records are exported nightly") and note.stderr == ""
