"""A character window of an original (offset/length), as every door's recover answers it."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mcpsqueeze._errors import UsageError
from mcpsqueeze.core._recover import answer
from mcpsqueeze.core._request import RecoverRequest

RID = "ab" * 16


def _window(text: str, **asked: Any) -> tuple[str, int]:
    """The window's text and the total characters its place names."""
    result = answer(
        [{"content": [{"type": "text", "text": text}]}], RecoverRequest.parse({"response_id": RID, **asked})
    )
    return result["content"][0]["text"], result["_meta"]["mcpsqueeze/window"]["total_chars"]


def test_a_window_is_the_slice_and_the_total_length() -> None:
    assert _window("abcdefghij", offset=2, length=3) == ("cde", 10)


def test_without_a_length_the_window_runs_to_the_end() -> None:
    assert _window("abcdefghij", offset=7) == ("hij", 10)


def test_a_window_past_the_end_is_cut_at_the_end() -> None:
    assert _window("abc", offset=1, length=100) == ("bc", 3)


def test_an_offset_at_the_end_gives_an_empty_window() -> None:
    assert _window("abc", offset=3) == ("", 3)


def test_windows_count_characters_not_bytes() -> None:
    assert _window("ééé😀x", offset=3, length=1) == ("😀", 5)


@pytest.mark.parametrize(
    ("asked", "message"),
    [
        ({"offset": -1}, "offset must be a whole number, 0 or more"),
        ({"length": -5}, "length must be a whole number, 0 or more"),
        ({"offset": 4, "length": 1}, "past the end"),
    ],
)
def test_a_bad_window_is_a_usage_error_that_says_how_to_fix_it(asked: dict[str, int], message: str) -> None:
    with pytest.raises(UsageError, match=message):
        _window("abc", **asked)


@given(st.text(), st.integers(min_value=1, max_value=50))
def test_consecutive_windows_reassemble_the_whole_text(text: str, size: int) -> None:
    parts = []
    offset = 0
    while offset < len(text):
        window, total = _window(text, offset=offset, length=size)
        assert total == len(text)
        parts.append(window)
        offset += len(window)
    assert "".join(parts) == text
