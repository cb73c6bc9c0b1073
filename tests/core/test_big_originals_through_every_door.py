"""grep and search of a JSON original whose long keys nest deep, and a page of fifty whole copies of an
original, through every door (recover_doors.py): each answers, none stalls or prints a traceback.
Their memory and time are pinned in tests/faults/test_recover_costs.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from hostile_inputs import long_keys_nested_deep
from recover_doors import DOORS, every_door

pytestmark = pytest.mark.fuzz

FIFTY = ",".join(["1-"] * 50)


def test_grep_search_and_pages_of_a_deep_long_keyed_original_answer_through_every_door(
    tmp_path: Path,
) -> None:
    original = long_keys_nested_deep()
    asks = [{"grep": "word 1"}, {"search": "word"}, {"grep": "bottom"}]
    doors = every_door(tmp_path, original, asks)
    assert set(doors.answers) == set(DOORS)
    for door, answers in doors.answers.items():
        for ask, answer in zip(asks, answers, strict=True):
            assert not answer.error and "values match" in answer.text, (door, ask, answer.text[:300])
            assert answer.seconds < 10, (door, ask, answer.seconds)
    assert "Traceback" not in "".join(doors.logs)


def test_a_page_of_fifty_whole_copies_answers_through_every_door_that_pages(tmp_path: Path) -> None:
    original = "".join(f"line {n:06d} of the original\n" for n in range(20_000))
    asks = [{"lines": FIFTY, "page": 0}, {"lines": FIFTY, "page": 600}]
    doors = every_door(tmp_path, original, asks, tuple(d for d in DOORS if d != "mcpsq"))
    start = 600 * 40_000 % len(original)
    page_600 = (original * 2)[start : start + 40_000]
    for door, (first, later) in doors.answers.items():
        assert not first.error and first.text.startswith("line 000000 of the original\n"), door
        assert not later.error and later.text.startswith(page_600), door  # MCP doors: then the note
    assert "Traceback" not in "".join(doors.logs)
