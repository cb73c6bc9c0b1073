"""`serve --toonify` on the shell door: `mcpsq` prints TOON, says so on stderr, and recovers the JSON."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import toon_format

from rawclient import ROOT, cli

RECORDS = [sys.executable, str(ROOT / "tests" / "fixtures" / "records_server.py")]


def test_mcpsq_prints_a_toonified_result_with_a_notice_and_recover_prints_the_original_json(
    tmp_path: Path,
) -> None:
    socket = tmp_path / "run" / "s.sock"
    argv = cli(
        "serve", "--recovery-dir", str(tmp_path / "rec"), "--socket", str(socket), "--toonify",
        "-n", "records", "--", *RECORDS,
    )  # fmt: skip
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    env = {**os.environ, "MCPSQUEEZE_SOCKET": str(socket)}

    def mcpsq(*args: str) -> subprocess.CompletedProcess[str]:
        shim = [sys.executable, "-m", "mcpsqueeze.bash.shim", *args]
        return subprocess.run(shim, env=env, capture_output=True, text=True, timeout=60)

    try:
        assert proc.stderr is not None
        seen = ""
        while "session ready on" not in seen:
            line = proc.stderr.readline()
            assert line, seen + f"(serve exited with {proc.poll()})"
            seen += line
        shown = mcpsq("records", "get-records", "--n", "40")
        note = mcpsq("records", "get-note")
        found = re.search(r"mcpsq recover ([0-9a-f]{32})", shown.stderr)
        assert found is not None, shown
        original = mcpsq("recover", found.group(1))
    finally:
        proc.send_signal(signal.SIGINT)
        _, summary = proc.communicate(timeout=30)
    assert shown.returncode == 0 and shown.stdout.startswith(
        "[40]{id,name,email,role,active,score,created_at}:"
    )
    assert shown.stderr.startswith("mcpsqueeze: Shown as TOON (") and shown.stderr.count("\n") == 1
    rows = json.loads(original.stdout)
    assert toon_format.loads(shown.stdout) == rows and len(rows) == 40
    assert original.stdout == json.dumps(rows, indent=2) + "\n"  # the backend's own bytes
    assert note.stdout.startswith("Records are exported nightly") and note.stderr == ""
    assert "  shown as TOON    1\n" in summary
