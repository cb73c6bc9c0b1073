"""`mcpsqueeze.core._toon`: which JSON texts become TOON, that the TOON is the same data, and its record."""

from __future__ import annotations

import json
from pathlib import Path

import toon_format

from mcpsqueeze._voice import McpVoice, ShellVoice
from mcpsqueeze.accounting._stats import Totals, render_summary
from mcpsqueeze.core._toon import toon_record, toonify_text
from mcpsqueeze.shrink import RecoveryHint
from rawclient import assert_golden

GOLDEN = Path(__file__).with_name("golden")
RID = "0123456789abcdef0123456789abcdef"
FILE = f"/home/agent/.cache/mcpsqueeze/recovery/mcpsqueeze-{RID}.json"
RECORDS = [
    {"id": i, "name": f"user {i}", "email": f"user{i}@example.com", "active": i % 3 == 0} for i in range(300)
]


def test_a_uniform_array_of_records_becomes_a_much_shorter_toon_table_of_the_same_data() -> None:
    text = json.dumps(RECORDS)
    toon = toonify_text(text)
    assert toon is not None and toon.startswith("[300]{id,name,email,active}:")
    assert len(toon) < len(text) / 2
    assert toon_format.loads(toon) == RECORDS


def test_pretty_printed_objects_become_toon_too() -> None:
    text = json.dumps({"data": {"items": RECORDS[:20], "next": "tok"}}, indent=2)
    toon = toonify_text(text)
    assert toon is not None and toon_format.loads(toon) == json.loads(text)


def test_prose_scalars_malformed_json_and_nan_stay_as_they_are() -> None:
    for text in ("hello world " * 50, '"a string"', "42", "[1, 2,", '{"x": NaN}', "", "   "):
        assert toonify_text(text) is None, text


def test_the_round_trip_check_tells_booleans_and_strings_from_numbers_but_not_1_from_1_0() -> None:
    from mcpsqueeze.core._toon import _same

    assert _same({"a": [1, 2.5]}, {"a": [1.0, 2.5]})
    assert not _same([True], [1]) and not _same([0], [False]) and not _same(["1"], [1])
    assert not _same({"a": 1, "b": 2}, {"b": 2, "a": 1})  # key order is part of what the agent reads
    assert not _same([None], [0]) and not _same([[1]], [1])


def test_json_whose_toon_would_not_save_enough_is_left_alone() -> None:
    assert toonify_text('{"a": 1, "b": 2, "sum": 3}') is None  # saves a few characters only
    irregular = json.dumps([{"k": [{"x": [i, {"y": i}]}]} for i in range(50)], separators=(",", ":"))
    assert toonify_text(irregular) is None  # nested, compact JSON: TOON is not shorter


def test_the_toon_record_has_the_truncation_shape_with_nothing_pruned() -> None:
    hint = RecoveryHint(RID, FILE, McpVoice())
    record = toon_record(29159, 13887, hint)
    assert list(record) == ["message", "response_id", "original_response_file", "report", "format"]
    assert record["format"] == "toon" and record["original_response_file"] == FILE
    report = record["report"]
    assert isinstance(report, dict)
    assert (report["pruned"], report["fits"], report["items_omitted"], report["keys_omitted"]) == (
        False, True, 0, 0,
    )  # fmt: skip
    assert (report["original_chars"], report["shown_chars"], report["strategy"]) == (29159, 13887, "toon")


def test_the_toon_messages_are_pinned() -> None:
    texts = [
        str(toon_record(29159, 13887, RecoveryHint(RID, FILE, McpVoice()))["message"]),
        str(toon_record(29159, 13887, RecoveryHint(RID, None, McpVoice()))["message"]),
        str(toon_record(29159, 13887, RecoveryHint(RID, FILE, ShellVoice()))["message"]),
    ]
    assert f"(or jq -rj '.content[0].text' {FILE})." in texts[2]  # the file is the whole MCP result
    assert_golden(GOLDEN / "toon_messages.txt", "\n".join(texts) + "\n")


def test_the_summary_names_toonified_results_only_when_there_are_some() -> None:
    totals = Totals()
    totals.add("passthrough", 10, 10)
    assert "TOON" not in render_summary(totals)
    totals.add("toon", 1000, 400)
    summary = render_summary(totals)
    assert "  shown as TOON    1\n" in summary and "passed through   1\n" in summary
