"""`mcpsqueeze demo`, the first thing a user runs: its table says what the proxy did, as its summaries do;
it shows what the agent's model read for one shrunk result and one recovery; it keeps its report and
names it on its last line."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

from docblocks import snippet
from rawclient import cli


def _demo(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The demo as a user runs it, its kept directory under a private cache home."""
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache")}
    done = subprocess.run(
        cli("demo", *args), capture_output=True, text=True, timeout=300, env=env, cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    return done


def test_the_demo_labels_the_deduplicated_calls_as_its_summary_counts_them_and_keeps_its_report(
    tmp_path: Path,
) -> None:
    done = _demo(tmp_path)
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
    kept = tmp_path / "cache" / "mcpsqueeze" / "demo"
    page = kept / "report.html"
    assert done.stdout.splitlines()[-1] == f"Open the report in a browser: {page.as_uri()}"
    assert page.is_file() and (kept / "stats.jsonl").is_file()
    # the README's stats commands, on the stats file the demo kept
    for line in snippet("readme-stats").text.splitlines():
        argv = line.split("#")[0].replace("stats.jsonl", str(kept / "stats.jsonl")).split()
        assert argv[:2] == ["mcpsqueeze", "stats"]
        shown = subprocess.run(cli(*argv[1:]), capture_output=True, text=True, timeout=60, cwd=tmp_path)
        assert shown.returncode == 0, shown.stderr
        assert "6 calls" in shown.stdout or '"calls": 6' in shown.stdout
    assert (tmp_path / "report.html").stat().st_size > 1000


def test_the_demo_shows_one_preview_and_one_recovery_and_leaves_the_report_it_names(tmp_path: Path) -> None:
    """Run as the README's first commands say (`mcpsqueeze demo --html demo.html`)."""
    command = snippet("first-commands").text.splitlines()[2].split("#")[0].split()
    assert command[:2] == ["mcpsqueeze", "demo"]
    page = tmp_path / command[command.index("--html") + 1]
    done = _demo(tmp_path, *command[2:])
    *_, last = done.stdout.splitlines()
    assert last == f"Open the report in a browser: {page.as_uri()}"
    # the report outlives the process: a private self-contained page with the session's numbers
    assert page.stat().st_mode & 0o777 == 0o600
    html = page.read_text(encoding="utf-8")
    embedded = re.search(r'<script[^>]*id="mcpsqueeze-data"[^>]*>(.*?)</script>', html, re.S)
    assert embedded is not None
    data = json.loads(embedded.group(1))
    assert data["totals"]["calls"] == 6 and data["totals"]["recovered"] == 1

    transcript = done.stdout.split("What the agent's model read for call #2", 1)[1].splitlines()[1:]
    assert transcript[0] == '→ read_file {"path":"docs/architecture.md"}'
    assert re.fullmatch(r"← [\d,]+ characters from the server; the model reads [\d,]+ \([\d,]+ -> [\d,]+ tokens\):",
                        transcript[1])  # fmt: skip
    header = transcript[2]
    offered = re.search(r"squeeze_recover (\{.*?\})", header)
    assert header.startswith("[mcpsqueeze] Outline of ") and offered is not None
    (recover_at,) = [i for i, line in enumerate(transcript) if line.startswith("→ squeeze_recover ")]
    assert transcript[recover_at] == f"→ squeeze_recover {offered.group(1)}"  # the call the preview offers
    asked = json.loads(offered.group(1))
    first, last_line = (int(n) for n in asked["lines"].split("-"))
    assert transcript[recover_at + 1] == f"← {last_line - first + 1} lines:"
    # what came back is that range of the stored original, line for line
    stored = (
        tmp_path / "cache" / "mcpsqueeze" / "demo" / "recovery" / f"mcpsqueeze-{asked['response_id']}.json"
    )
    original = json.loads(stored.read_text(encoding="utf-8"))["content"][0]["text"].split("\n")
    shown = transcript[recover_at + 2 : recover_at + 2 + 12]
    assert shown == original[first - 1 : first - 1 + len(shown)]
