"""grep and search inside a UTF-8 original, through every door (recover_doors.py): a pattern that
matches inside a multi-byte character (RE2's `\\C` is one byte) or starts a match there shows the
line, never a decoding error that ends wrap or answers 500."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from hostile_inputs import UTF8
from mcpsqueeze.core._search import grep, search
from recover_doors import DOORS, every_door

SPLITS: list[dict[str, Any]] = [
    {"grep": "\\Cx"},
    {"grep": "\\C\\C"},
    {"grep": "x\\C"},
    {"grep": "\\C{3}x", "ignore_case": True},
]


@pytest.mark.parametrize("pattern", [s["grep"] for s in SPLITS])
def test_grep_matching_inside_a_utf8_character_shows_the_line(pattern: str) -> None:
    found = grep(UTF8, pattern)
    assert found.total == 40 and found.hits[0] == 1
    assert found.text.splitlines()[1].startswith("1:")
    values = grep({"a": UTF8.splitlines()}, pattern)  # JSON values: the same excerpt
    assert values.total == 40 and values.hits[0] == "/a/0"


def test_search_on_a_utf8_original_shows_lines_around_the_word() -> None:
    assert search(UTF8, "line").total == 40


def test_grep_inside_a_utf8_character_answers_through_every_door(tmp_path: Path) -> None:
    doors = every_door(tmp_path, UTF8, SPLITS)
    assert set(doors.answers) == set(DOORS)
    for door, answers in doors.answers.items():
        for ask, answer in zip(SPLITS, answers, strict=True):
            assert not answer.error and "40 of 40 lines match" in answer.text, (door, ask, answer)
    assert "Traceback" not in "".join(doors.logs)
