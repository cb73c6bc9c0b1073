"""Properties over generated JSON and text: the budget is never exceeded, JSON stays JSON."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcpsqueeze._errors import ShrinkError
from mcpsqueeze._voice import McpVoice, ShellVoice
from mcpsqueeze.shrink import RecoveryHint, shrink_texts

HINTS = st.sampled_from(
    [
        RecoveryHint("a" * 32, "/tmp/recovery/mcpsqueeze-" + "a" * 32 + ".json", McpVoice()),
        RecoveryHint("b" * 32, None, McpVoice("squeeze_recover_1")),
        RecoveryHint("c" * 32, "/var/cache/x/mcpsqueeze-" + "c" * 32 + ".json", ShellVoice()),
    ]
)
BUDGETS = st.sampled_from([1024, 1500, 4000, 20000])
TEXT = st.text(st.characters(codec=None), max_size=60)  # any code point, lone surrogates included
SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(-(10**40), 10**40)
    | st.floats(allow_nan=False, allow_infinity=False)
    | TEXT
)
JSON = st.recursive(
    SCALARS,
    lambda children: st.lists(children, max_size=12) | st.dictionaries(TEXT, children, max_size=8),
    max_leaves=60,
)
SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _widen(value: Any, times: int) -> Any:
    """Make a generated value big enough to need shrinking, keeping its top-level type."""
    if isinstance(value, dict):
        return {**{f"k{i}": [value] * times for i in range(3)}, **value}
    if isinstance(value, list):
        return value * times + [value] * times
    if isinstance(value, str):
        return value * times + "tail" * times
    return [value] * times


def _check(texts: list[str], budget: int, hint: RecoveryHint) -> None:
    try:
        result = shrink_texts(texts, budget, hint)
    except ShrinkError:
        # Allowed only where a preview plus its record may truly not fit: small budgets or many blocks.
        assert budget < 4000 or len(texts) > 2
        return
    total = sum(map(len, texts))
    if total <= budget:
        assert result is None
        return
    assert result is not None
    assert len(result.texts) == len(texts)
    assert sum(map(len, result.texts)) + len(result.notice or "") <= budget
    assert result.truncation["response_id"] == hint.response_id
    for before, after in zip(texts, result.texts, strict=True):
        try:
            original = json.loads(before)
        except (ValueError, RecursionError):
            continue
        if after == before:
            continue
        shown = json.loads(after)
        assert type(shown) is type(original)
        if isinstance(original, dict):
            assert set(original) <= set(shown)
            if "truncation" in original:
                assert shown["truncation"] == original["truncation"]
                assert result.notice is not None


@SETTINGS
@given(JSON, st.integers(1, 400), BUDGETS, HINTS)
def test_generated_json_fits_and_keeps_type_and_top_level_keys(
    value: Any, times: int, budget: int, hint: RecoveryHint
) -> None:
    text = json.dumps(_widen(value, times))
    _check([text], budget, hint)


@SETTINGS
@given(st.lists(JSON, min_size=1, max_size=4), st.integers(1, 200), BUDGETS, HINTS)
def test_several_generated_blocks_share_one_budget(
    values: list[Any], times: int, budget: int, hint: RecoveryHint
) -> None:
    texts = [
        json.dumps(_widen(v, times)) if i % 2 else json.dumps(v, indent=2) * times
        for i, v in enumerate(values)
    ]
    _check(texts, budget, hint)


@SETTINGS
@given(st.text(st.characters(codec=None), max_size=400), st.integers(1, 300), BUDGETS, HINTS)
def test_generated_text_fits(text: str, times: int, budget: int, hint: RecoveryHint) -> None:
    _check([text * times], budget, hint)


@SETTINGS
@given(JSON, BUDGETS, HINTS)
def test_inputs_within_budget_are_left_alone(value: Any, budget: int, hint: RecoveryHint) -> None:
    text = json.dumps(value)[:budget]
    assert shrink_texts([text], budget, hint) is None


def test_huge_inputs_fit(hint: RecoveryHint) -> None:
    rows = [{"id": i, "text": "é漢🙂" * (i % 40), "n": [i, i * 1.5, None, True]} for i in range(60000)]
    text = json.dumps({"rows": rows}, ensure_ascii=False)
    assert len(text) > 4_000_000
    for budget in (1024, 20000):
        result = shrink_texts([text], budget, hint)
        assert result is not None
        assert len(result.texts[0]) <= budget
        assert set(json.loads(result.texts[0])) == {"rows", "truncation"}


def test_deeply_nested_objects_and_arrays_never_crash(hint: RecoveryHint) -> None:
    for depth in (500, 1000, 2000, 10000):
        for opener, closer in (("[", "]"), ('{"a":', "}")):
            text = opener * depth + "1" + closer * depth
            _check([text], 1024, hint)
            _check([text, text], 4000, hint)


def test_unicode_heavy_and_lone_surrogate_text_fits(hint: RecoveryHint) -> None:
    for text in ("🙂漢字\u0301" * 3000, "\ud800abc\udfff" * 2000, "\x00\x1f\n\t" * 3000):
        _check([text], 1024, hint)
        _check([json.dumps([text, {"k": text}])], 1024, hint)
        _check([json.dumps({"s": text}, ensure_ascii=False)], 1024, hint)


def test_nan_bearing_text_is_text_and_big_integers_are_json(hint: RecoveryHint) -> None:
    nan_text = "[NaN, 1]" + " " * 3000
    result = shrink_texts([nan_text], 1024, hint)
    assert result is not None and result.report.strategy.startswith("text:")
    big = json.dumps([10**40] * 500)
    result = shrink_texts([big], 1024, hint)
    assert result is not None and json.loads(result.texts[0])[0] == 10**40
