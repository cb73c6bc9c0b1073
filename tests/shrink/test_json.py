"""JSON documents keep their type, their top-level keys and every field name where possible."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from mcpsqueeze._errors import ShrinkError
from mcpsqueeze._voice import McpVoice
from mcpsqueeze.shrink import RecoveryHint, shrink_texts

GAP = re.compile(r"^…\[#(\d+)-(\d+) omitted\]$|^…\[#(\d+) omitted\]$")


def _records(n: int, body: int = 200) -> list[dict[str, Any]]:
    return [
        {"id": i, "name": f"user{i}", "body": ("lorem ipsum " * (1 + i % 5))[:body], "tags": ["a", "b"]}
        for i in range(n)
    ]


def _gaps(items: list[Any]) -> int:
    omitted = 0
    for item in items:
        if isinstance(item, str) and (m := GAP.match(item)):
            omitted += int(m.group(2)) - int(m.group(1)) + 1 if m.group(1) else 1
    return omitted


def _keys(node: Any) -> set[str]:
    out: set[str] = set()
    stack = [node]
    while stack:
        cur = stack.pop()
        if isinstance(cur, dict):
            out.update(cur)
            stack.extend(cur.values())
        elif isinstance(cur, list):
            stack.extend(cur)
    return out


def test_object_keeps_every_top_level_key_and_gets_a_truncation_sibling(hint: RecoveryHint) -> None:
    doc = {"total": 500, "records": _records(500), "next": "tok", "meta": {"a": 1}}
    result = shrink_texts([json.dumps(doc)], 4000, hint)
    assert result is not None
    out = json.loads(result.texts[0])
    assert list(out) == ["total", "records", "next", "meta", "truncation"]
    assert out["truncation"] == result.truncation
    assert result.truncation["response_id"] == hint.response_id
    assert result.truncation["original_response_file"] == hint.file
    assert result.notice is None
    assert len(result.texts[0]) <= 4000


def test_record_has_no_file_key_when_memory_only() -> None:
    hint = RecoveryHint("f" * 32, None, McpVoice())
    result = shrink_texts([json.dumps({"a": _records(300)})], 3000, hint)
    assert result is not None
    assert "original_response_file" not in result.truncation
    assert set(result.truncation) == {"message", "response_id", "report"}


def test_report_counts_are_real_and_shown_chars_is_the_presented_length(hint: RecoveryHint) -> None:
    doc = {"records": _records(400)}
    result = shrink_texts([json.dumps(doc)], 5000, hint)
    assert result is not None
    out = json.loads(result.texts[0])
    report = result.report
    assert report.items_omitted == _gaps(out["records"]) > 0
    assert len([r for r in out["records"] if isinstance(r, dict)]) == 400 - report.items_omitted
    assert report.shown_chars == len(result.texts[0])
    assert report.original_chars == len(json.dumps(doc))
    assert out["truncation"]["report"] == report.as_dict()
    assert report.pruned and report.fits


def test_a_backend_owned_truncation_key_is_never_overwritten(hint: RecoveryHint) -> None:
    doc = {"truncation": {"backend": "own"}, "rows": _records(300)}
    result = shrink_texts([json.dumps(doc)], 3000, hint)
    assert result is not None
    out = json.loads(result.texts[0])
    assert out["truncation"] == {"backend": "own"}
    assert result.notice is not None and hint.response_id in result.notice
    assert result.truncation["response_id"] == hint.response_id
    assert len(result.texts[0]) + len(result.notice) <= 3000


def test_array_keeps_its_type_and_recovery_goes_to_the_notice(hint: RecoveryHint) -> None:
    result = shrink_texts([json.dumps(_records(300))], 3000, hint)
    assert result is not None
    out = json.loads(result.texts[0])
    assert isinstance(out, list)
    assert out[0]["id"] == 0 and out[-1]["id"] == 299  # first and last kept
    assert result.notice is not None and hint.response_id in result.notice
    assert sum(map(len, result.texts)) + len(result.notice) <= 3000
    assert result.truncation["report"] == result.report.as_dict(compact=True)  # compact: no strategy


def test_scalar_string_keeps_its_type_with_an_in_string_marker(hint: RecoveryHint) -> None:
    result = shrink_texts([json.dumps("word " * 5000)], 2000, hint)
    assert result is not None
    out = json.loads(result.texts[0])
    assert isinstance(out, str) and re.search(r"…\[\+\d+\]$", out)
    assert result.report.strings_truncated == 1
    assert result.notice is not None


def test_long_strings_are_cut_with_an_exact_in_string_count(hint: RecoveryHint) -> None:
    doc = {"a": "x" * 50000, "b": "short"}
    result = shrink_texts([json.dumps(doc)], 2000, hint)
    assert result is not None
    out = json.loads(result.texts[0])
    match = re.fullmatch(r"(x*)…\[\+(\d+)\]", out["a"])
    assert match is not None and len(match.group(1)) + int(match.group(2)) == 50000
    assert out["b"] == "short"


def test_sampling_keeps_an_item_for_every_field_name(hint: RecoveryHint) -> None:
    rows: list[dict[str, Any]] = [{"id": i, "name": f"n{i}"} for i in range(1000)]
    rows[137]["rare"] = True
    rows[555]["nested"] = {"deep": [{"deeper": 1}]}
    rows[800] = {"id": 800, "other_shape": "yes"}
    result = shrink_texts([json.dumps({"rows": rows})], 2000, hint)
    assert result is not None
    out = json.loads(result.texts[0])
    assert {"id", "name", "rare", "nested", "deep", "deeper", "other_shape"} <= _keys(out["rows"])


def test_bigger_budgets_keep_more_items(hint: RecoveryHint) -> None:
    text = json.dumps({"rows": _records(2000)})
    kept = []
    for budget in (2000, 8000, 30000):
        result = shrink_texts([text], budget, hint)
        assert result is not None
        kept.append(2000 - result.report.items_omitted)
    assert kept[0] < kept[1] < kept[2]


def test_preview_fills_most_of_the_budget(hint: RecoveryHint) -> None:
    result = shrink_texts([json.dumps({"rows": _records(3000)})], 20000, hint)
    assert result is not None
    assert 19000 <= len(result.texts[0]) <= 20000


def test_pretty_json_that_fits_compacted_is_only_compacted(hint: RecoveryHint) -> None:
    doc = {"rows": _records(60)}
    text = json.dumps(doc, indent=4)
    budget = len(json.dumps(doc, separators=(",", ":"))) + 1000
    assert len(text) > budget
    result = shrink_texts([text], budget, hint)
    assert result is not None
    out = json.loads(result.texts[0])
    out.pop("truncation")
    assert out == doc
    assert not result.report.pruned and "only whitespace removed" in str(result.truncation["message"])


def test_deep_nesting_is_collapsed_with_a_marker(hint: RecoveryHint) -> None:
    node: Any = {"leaf": "x" * 3000}
    for i in range(200):
        node = {f"k{i}": node}
    result = shrink_texts([json.dumps(node)], 2000, hint)
    assert result is not None
    text = result.texts[0]
    assert len(text) <= 2000
    assert "keys}" in text or "…[+" in text
    json.loads(text)


def test_ten_thousand_levels_do_not_crash(hint: RecoveryHint) -> None:
    text = "[" * 10000 + "]" * 10000
    result = shrink_texts([text], 2000, hint)
    assert result is not None
    assert sum(map(len, result.texts)) + len(result.notice or "") <= 2000


def test_big_integers_round_trip_exactly(hint: RecoveryHint) -> None:
    doc = {"big": 10**40, "neg": -(10**30), "rows": _records(300)}
    result = shrink_texts([json.dumps(doc)], 3000, hint)
    assert result is not None
    out = json.loads(result.texts[0])
    assert out["big"] == 10**40 and out["neg"] == -(10**30)
    assert str(10**40) in result.texts[0]


def test_escaped_lone_surrogates_stay_escaped(hint: RecoveryHint) -> None:
    doc = '{"s": "\\ud800 lone", "rows": ' + json.dumps(_records(300)) + "}"
    result = shrink_texts([doc], 3000, hint)
    assert result is not None
    assert "\\ud800" in result.texts[0]
    assert json.loads(result.texts[0])["s"] == "\ud800 lone"


def test_objects_with_many_keys_drop_and_name_some(hint: RecoveryHint) -> None:
    doc = {"map": {f"key{i}": {"v": i, "text": "y" * 50} for i in range(2000)}}
    result = shrink_texts([json.dumps(doc)], 3000, hint)
    assert result is not None
    out = json.loads(result.texts[0])
    report = result.report
    assert report.keys_omitted > 0
    assert 0 < len(report.dropped_fields) <= 20
    assert len(out["map"]) < 2000


def test_several_blocks_share_the_budget_and_small_ones_stay_whole(hint: RecoveryHint) -> None:
    small = '{"status": "ok"}'
    big_json = json.dumps({"rows": _records(1000)})
    big_text = "".join(
        f"line {i} of text {i * 7919 % 104729:x}{chr(97 + i % 26)}{chr(97 + i // 26 % 26)}\n"
        for i in range(3000)
    )
    result = shrink_texts([small, big_json, big_text], 10000, hint)
    assert result is not None
    assert result.texts[0] == small
    assert sum(map(len, result.texts)) + len(result.notice or "") <= 10000
    assert 2000 < len(result.texts[2]) < len(result.texts[1])  # split by size, both useful
    assert json.loads(result.texts[1])["truncation"]["response_id"] == hint.response_id


def test_impossible_budget_raises_shrink_error(hint: RecoveryHint) -> None:
    doc = {f"key{i}": i for i in range(500)}  # every top-level key must stay
    with pytest.raises(ShrinkError):
        shrink_texts([json.dumps(doc)], 1024, hint)


def test_a_text_parsed_again_right_after_is_not_parsed_twice_and_reads_the_same() -> None:
    from mcpsqueeze._jsonbytes import NOT_JSON, parse_kept, parse_strict

    text = json.dumps({"items": [{"id": i, "big": 10**30 + i} for i in range(50)]})
    first = parse_kept(text)
    assert parse_kept(text) is first  # the overlap stage's parse serves the engine
    assert first == parse_strict(text) and first["items"][3]["big"] == 10**30 + 3  # type: ignore[index]
    assert parse_kept("not json") is NOT_JSON
    other = "".join(text)  # an equal text in another object is parsed on its own, to an equal value
    assert parse_kept(other) == first
