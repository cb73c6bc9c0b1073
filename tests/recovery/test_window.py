from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mcpsqueeze._errors import UsageError
from mcpsqueeze.recovery import read_window


def test_a_window_is_the_slice_and_the_total_length() -> None:
    assert read_window("abcdefghij", 2, 3) == ("cde", 10)


def test_without_a_length_the_window_runs_to_the_end() -> None:
    assert read_window("abcdefghij", 7) == ("hij", 10)


def test_a_window_past_the_end_is_cut_at_the_end() -> None:
    assert read_window("abc", 1, 100) == ("bc", 3)


def test_an_offset_at_the_end_gives_an_empty_window() -> None:
    assert read_window("abc", 3) == ("", 3)


def test_windows_count_characters_not_bytes() -> None:
    assert read_window("ééé😀x", 3, 1) == ("😀", 5)


@pytest.mark.parametrize(
    ("offset", "length", "message"),
    [(-1, None, "offset must be 0 or more"), (0, -5, "length must be 0 or more"), (4, 1, "past the end")],
)
def test_a_bad_window_is_a_usage_error_that_says_how_to_fix_it(
    offset: int, length: int | None, message: str
) -> None:
    with pytest.raises(UsageError, match=message):
        read_window("abc", offset, length)


@given(st.text(), st.integers(min_value=1, max_value=50))
def test_consecutive_windows_reassemble_the_whole_text(text: str, size: int) -> None:
    parts = []
    offset = 0
    while offset < len(text):
        window, total = read_window(text, offset, size)
        assert total == len(text)
        parts.append(window)
        offset += len(window)
    assert "".join(parts) == text
