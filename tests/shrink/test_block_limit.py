"""``block_limit`` (``--truncate-chars``): a cap on every text block next to the whole-result budget."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcpsqueeze._errors import ShrinkError
from mcpsqueeze._voice import McpVoice
from mcpsqueeze.shrink import RecoveryHint, shrink_texts

OBJECT = json.dumps(
    {"issues": [{"key": f"P-{i}", "summary": "fix the login " * 5, "labels": ["a", "b"]} for i in range(200)]}
)
ARRAY = json.dumps([{"id": i, "name": f"row {i}", "note": "x" * 30} for i in range(300)])
PROSE = "".join(f"line {i:04d}: the quick brown fox jumps over the lazy dog\n" for i in range(400))


def test_a_block_over_the_limit_is_cut_even_when_the_whole_result_is_under_the_budget(
    hint: RecoveryHint,
) -> None:
    shrunk = shrink_texts([PROSE], 100_000, hint, block_limit=2000)
    assert shrunk is not None
    (text,) = shrunk.texts
    assert len(text) <= 2000 < len(PROSE)
    assert f'recover with squeeze_recover {{"response_id":"{hint.response_id}"}}' in text


def test_blocks_under_the_limit_and_a_result_under_the_budget_are_left_alone(hint: RecoveryHint) -> None:
    assert shrink_texts(["short", PROSE[:1999]], 100_000, hint, block_limit=2000) is None


def test_the_stricter_of_budget_and_limit_applies_to_each_block(hint: RecoveryHint) -> None:
    by_limit = shrink_texts([PROSE, PROSE], 100_000, hint, block_limit=3000)
    by_budget = shrink_texts([PROSE, PROSE], 4000, hint, block_limit=3000)
    assert by_limit is not None and by_budget is not None
    assert all(2000 < len(t) <= 3000 for t in by_limit.texts)
    assert sum(map(len, by_budget.texts)) + len(by_budget.notice or "") <= 4000
    assert all(len(t) <= 3000 for t in by_budget.texts)


@pytest.mark.parametrize("limit", [256, 512, 2000])
def test_an_object_too_big_for_its_record_in_one_block_moves_the_record_to_the_notice(
    hint: RecoveryHint, limit: int
) -> None:
    shrunk = shrink_texts([OBJECT], 100_000, hint, block_limit=limit)
    assert shrunk is not None
    preview = json.loads(shrunk.texts[0])
    assert len(shrunk.texts[0]) <= limit and "issues" in preview
    assert shrunk.truncation["response_id"] == hint.response_id
    if "truncation" not in preview:
        assert shrunk.notice is not None and hint.response_id in shrunk.notice


@settings(max_examples=40, deadline=None)
@given(
    sizes=st.lists(st.integers(min_value=0, max_value=9000), min_size=1, max_size=4),
    kinds=st.lists(st.sampled_from(["object", "array", "prose"]), min_size=4, max_size=4),
    limit=st.integers(min_value=256, max_value=5000),
    budget=st.integers(min_value=1024, max_value=30_000),
)
def test_no_block_is_ever_longer_than_the_limit_nor_the_whole_longer_than_the_budget(
    sizes: list[int], kinds: list[str], limit: int, budget: int
) -> None:
    source = {"object": OBJECT, "array": ARRAY, "prose": PROSE}
    texts = [
        source[kind][:size] if kind == "prose" else source[kind]
        for size, kind in zip(sizes, kinds, strict=False)
    ]
    hint = RecoveryHint("0" * 32, "/r/mcpsqueeze-" + "0" * 32 + ".json", McpVoice())
    try:
        shrunk = shrink_texts(texts, budget, hint, block_limit=limit)
    except ShrinkError:
        return  # refused explicitly: the stage then passes the result unchanged and says why
    if shrunk is None:
        assert sum(map(len, texts)) <= budget and max(map(len, texts)) <= limit
        return
    assert all(len(t) <= limit for t in shrunk.texts)
    assert sum(map(len, shrunk.texts)) + len(shrunk.notice or "") <= budget
    assert shrunk.notice is None or len(shrunk.notice) <= limit
