"""The shim's agent-facing wording is pinned: the stderr notice lines and the recover usage texts."""

from __future__ import annotations

from pathlib import Path

from mcpsqueeze.bash._core import Printout, notice_line, plan_recover
from rawclient import assert_golden

GOLDEN = Path(__file__).parent / "golden"
RID = "0123456789abcdef0123456789abcdef"
FILE = f"/home/u/.cache/mcpsqueeze/recovery/mcpsqueeze-{RID}.json"


def test_the_stderr_notice_lines_for_shrunk_and_deduplicated_results_are_pinned() -> None:
    metas = {
        "shrunk, the message names neither id nor file": {
            "truncation": {
                "response_id": RID,
                "original_response_file": FILE,
                "message": "Shrunk to 2000 chars.",
            }
        },
        "shrunk, the message names both": {
            "truncation": {
                "response_id": RID,
                "original_response_file": FILE,
                "message": f"Shrunk {RID} {FILE}",
            }
        },
        "shrunk, no message": {"truncation": {"response_id": RID}},
        "deduplicated, stored in a file": {
            "truncation": {"response_id": RID},
            "mcpsqueeze/dedup": {
                "response_id": RID,
                "original_response_file": FILE,
                "same_as_call": 3,
                "tool": "search_issues",
            },
        },
        "deduplicated, in memory only": {
            "mcpsqueeze/dedup": {"response_id": RID, "same_as_call": 1, "tool": "get_file"}
        },
        "neither": {},
    }
    text = "".join(f"## {name}\n{notice_line(meta)}" for name, meta in metas.items())
    assert_golden(GOLDEN / "notice_lines.txt", text)


def test_the_recover_help_and_usage_errors_are_pinned() -> None:
    parts = []
    for argv in (
        ["recover", "--help"],
        ["recover"],
        ["recover", RID, "--bogus"],
        ["recover", RID, "--pointer"],
        ["recover", RID, "--lines", "1", "--lines", "2"],  # several pointers and ids are fine
        ["recover", RID, "--pointer", "/a", "--lines", "1"],
    ):
        outcome = plan_recover(argv)
        assert isinstance(outcome, Printout)
        parts.append(f"## mcpsq {' '.join(argv)} (exit {outcome.code})\n{outcome.stdout}{outcome.stderr}")
    assert_golden(GOLDEN / "recover_usage.txt", "".join(parts))
