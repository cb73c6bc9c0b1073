from __future__ import annotations

import dataclasses
import inspect

import mcpsqueeze.shrink as shrink
from mcpsqueeze._voice import McpVoice


def test_public_api_is_exactly_the_documented_names() -> None:
    assert sorted(shrink.__all__) == [
        "NOT_JSON",
        "RecoveryHint",
        "Report",
        "Shrunk",
        "landmarks",
        "parse_kept",
        "parse_strict",
        "query_terms",
        "rank_lines",
        "render_call",
        "render_message",
        "render_notice",
        "render_text_marker",
        "search_terms",
        "shrink_texts",
    ]


def test_report_as_dict_lists_every_counter_in_order() -> None:
    report = shrink.Report(True, True, 100, 50, 1, 2, 3, ("a",), "s")
    assert list(report.as_dict()) == [
        "pruned",
        "fits",
        "original_chars",
        "shown_chars",
        "items_omitted",
        "keys_omitted",
        "strings_truncated",
        "dropped_fields",
        "strategy",
    ]
    assert report.as_dict()["dropped_fields"] == ["a"]


def test_public_dataclasses_are_frozen_and_hint_defaults_to_squeeze_recover() -> None:
    for cls in (shrink.RecoveryHint, shrink.Report, shrink.Shrunk):
        assert dataclasses.is_dataclass(cls)
        assert cls.__dataclass_params__.frozen  # type: ignore[attr-defined]
    assert shrink.RecoveryHint("0" * 32, None).voice == McpVoice()


def test_shrink_texts_signature_is_texts_budget_hint_optional_query_terms_and_keyword_block_limit_and_above() -> (
    None
):
    parameters = inspect.signature(shrink.shrink_texts).parameters
    assert list(parameters) == ["texts", "budget", "hint", "query_terms", "block_limit", "above"]
    assert parameters["query_terms"].default == ()
    for name in ("block_limit", "above"):  # off unless asked: the engine alone shrinks only over budget
        assert parameters[name].kind is inspect.Parameter.KEYWORD_ONLY
        assert parameters[name].default is None
