"""`mcpsqueeze demo`, the first thing a user runs: its table says what the proxy did, as its summaries do."""

from __future__ import annotations

import re
import subprocess

from rawclient import cli


def test_the_demo_labels_the_deduplicated_calls_as_its_summary_counts_them() -> None:
    done = subprocess.run(cli("demo"), capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    rows = dict(re.findall(r"^#(\d+)\s+\S+\s+.+?\s+\d+  (.+)$", done.stdout, re.MULTILINE))
    assert [rows[str(n)].split(",")[0] for n in range(1, 7)] == [
        "shrunk", "shrunk", "shrunk",
        "deduplicated (same as call #1)", "deduplicated (same as call #2)",
        "passed through",
    ]  # fmt: skip
    # wrap had time to finish: its own summary on stderr, and every call in the stats file read after it
    assert "mcpsqueeze session summary:" in done.stderr and "deduplicated     2" in done.stderr
    report = done.stdout.split("stats.jsonl: ", 1)[1]
    assert report.startswith("6 calls:") and "deduplicated     2" in report and "shrunk           3" in report
