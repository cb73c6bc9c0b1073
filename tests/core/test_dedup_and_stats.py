"""Pure pieces of the pipeline: content digests, the dedup pointer and the summary renderers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mcpsqueeze._voice import McpVoice, ShellVoice
from mcpsqueeze.accounting._report import load_report, render_text
from mcpsqueeze.accounting._stats import Totals, render_summary
from mcpsqueeze.core._dedup import content_digest, render_pointer
from rawclient import assert_golden

GOLDEN = Path(__file__).with_name("golden")


def golden(name: str, text: str) -> None:
    assert_golden(GOLDEN / name, text)


def test_the_digest_ignores_key_order_but_not_values() -> None:
    a = [{"type": "text", "text": "x", "annotations": {"p": 1, "q": 2}}]
    b = [{"annotations": {"q": 2, "p": 1}, "text": "x", "type": "text"}]
    assert content_digest(a) == content_digest(b)
    assert content_digest(a) != content_digest([{"type": "text", "text": "y"}])


def test_the_digest_handles_integers_beyond_64_bits() -> None:
    assert content_digest([{"n": 10**40}]) != content_digest([{"n": 10**40 + 1}])


def test_the_pointer_text_is_pinned() -> None:
    rid = "0123456789abcdef0123456789abcdef"
    mcp = render_pointer(
        number=3, tool="search_issues", tokens=1210, chars=4012, response_id=rid,
        how_to_recover=McpVoice().see_again(rid),
    )  # fmt: skip
    shell = render_pointer(
        number=3, tool="search_issues", tokens=None, chars=4012, response_id=rid,
        how_to_recover=ShellVoice().see_again(rid),
    )  # fmt: skip
    golden("pointer_mcp.txt", mcp)
    golden("pointer_shell.txt", shell)


def test_the_session_summary_is_pinned() -> None:
    totals = Totals()
    totals.add("passthrough", 10, 10)
    totals.add("dedup", 1210, 40)
    totals.add("shrink", 60000, 5000, store_failed=False)
    totals.add("passthrough", 70000, 70000, store_failed=True)
    golden("summary.txt", render_summary(totals) + "\n")


def test_stats_file_summary_totals_per_tool_and_biggest(tmp_path: Path) -> None:
    stats = tmp_path / "stats.jsonl"
    rows = [
        {"tool": "search", "call": 1, "action": "shrink", "tokens_before": 60000, "tokens_after": 5000},
        {"tool": "search", "call": 2, "action": "dedup", "tokens_before": 60000, "tokens_after": 60},
        {"tool": "echo", "call": 3, "action": "passthrough", "tokens_before": 3, "tokens_after": 3},
    ]
    stats.write_text("\n".join(json.dumps(r) for r in rows) + "\nnot json\n")
    text = render_text(load_report([stats], top=2))
    assert "calls proxied    3" in text
    assert "tokens saved     114940" in text
    assert "search" in text.split("biggest results")[1]
    assert "skipped 1 malformed line" in text


@pytest.mark.parametrize("action", ["passthrough", "dedup", "shrink", "error", "full"])
def test_totals_count_each_action_once(action: str) -> None:
    totals = Totals()
    totals.add(action, 100, 10)
    assert totals.calls == 1
    assert totals.passthrough + totals.deduplicated + totals.shrunk + totals.errors + totals.full == 1
