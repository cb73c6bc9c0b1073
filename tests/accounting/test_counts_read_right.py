"""What a new user reads first reads right: a count of one is singular ("1 call", not "1 calls") in the
stats report, its session rows and its HTML page; `mcpsq`'s listing keeps one description column for
every server, however long each server's names are."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from mcpsqueeze.accounting._report import load_report, render_text, report_data
from mcpsqueeze.accounting._stats_html import render_html
from mcpsqueeze.bash._catalog import Catalog, ServerInfo
from mcpsqueeze.bash._help import render_listing

pytestmark = pytest.mark.fuzz


def _one_call(tmp_path: Path) -> Path:
    row = {"time": 1000.0, "session": "s1", "server": "gh", "tool": "search", "call": 1, "action": "shrink",
           "chars_before": 9000, "chars_after": 900, "tokens_before": 3000, "tokens_after": 300}  # fmt: skip
    path = tmp_path / "stats.jsonl"
    path.write_text(json.dumps(row) + "\n", encoding="utf-8")
    return path


def test_a_report_of_one_call_says_one_call(tmp_path: Path) -> None:
    report = load_report([_one_call(tmp_path)])
    text = render_text(report)
    assert ": 1 call:" in text and "1 calls" not in text, text
    assert re.search(r"\s1 call\s", text.split("sessions (1):", 1)[1]), text
    page = render_html(report_data(report))
    assert "1 calls" not in page and "1 session(s)" not in page and ">1 session<" in page


def test_the_listing_keeps_one_description_column_for_every_server() -> None:
    short = ServerInfo({"name": "gh", "tools": [{"name": "ls", "description": "List things."}]})
    long = ServerInfo(
        {
            "name": "filesystem",
            "tools": [{"name": "read_multiple_text_files", "description": "Read many files."}],
        }
    )
    listing = render_listing(Catalog([short, long]))
    starts = {line.index("List things."): line for line in listing.splitlines() if "List things." in line}
    starts |= {line.index("Read many files."): line for line in listing.splitlines() if "Read many" in line}
    assert len(starts) == 1, listing
