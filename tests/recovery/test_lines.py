from __future__ import annotations

import json
from typing import Any

import pytest

from mcpsqueeze._errors import UsageError
from mcpsqueeze._lines import line_span, parse_line_range, split_lines
from mcpsqueeze.core import RecoverRequest, answer


def recover_result(original: bytes, **arguments: Any) -> dict[str, Any]:
    """The core's answer for `arguments` from stored original bytes (as every door gets it)."""
    return answer([json.loads(original)], RecoverRequest.parse({"response_id": "0" * 32, **arguments}))


def test_lines_keep_their_newlines_and_a_final_newline_makes_no_empty_line() -> None:
    assert split_lines("a\nb\n") == ["a\n", "b\n"]
    assert split_lines("a\nb") == ["a\n", "b"]
    assert split_lines("a\r\n\nb") == ["a\r\n", "\n", "b"]
    assert split_lines("") == []


def test_only_newline_ends_a_line() -> None:
    assert split_lines("a\rb\x0bc\u2028d\n") == ["a\rb\x0bc\u2028d\n"]


@pytest.mark.parametrize(
    ("spec", "expected"), [("120-180", (120, 180)), ("7", (7, 7)), (" 3 - 4 ", (3, 4)), ("120-", (120, None))]
)
def test_a_line_range_is_parsed(spec: str, expected: tuple[int, int | None]) -> None:
    assert parse_line_range(spec) == expected


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("", "must be a line range"),
        ("a-b", "must be a line range"),
        ("0-3", "count from 1"),
        ("9-3", "ends before"),
    ],
)
def test_a_bad_range_is_a_usage_error_that_says_how_to_write_one(spec: str, message: str) -> None:
    with pytest.raises(UsageError, match=message):
        parse_line_range(spec)


def test_a_line_span_is_exactly_those_lines_and_where_they_are() -> None:
    text = "one\ntwo\nthree\nfour"
    assert line_span(text, "2-3") == (4, 14, 2, 3, 4) and text[4:14] == "two\nthree\n"
    assert line_span(text, "4") == (14, 18, 4, 4, 4) and text[14:18] == "four"
    assert line_span(text, "3-99") == (8, 18, 3, 4, 4)  # stops at the last line, says so


def test_a_start_past_the_end_names_the_number_of_lines() -> None:
    with pytest.raises(UsageError, match="has 4 line"):
        line_span("1\n2\n3\n4\n", "5-6")


def _original(*texts: str) -> bytes:
    return json.dumps({"content": [{"type": "text", "text": t} for t in texts], "isError": False}).encode()


def test_recover_reads_lines_of_the_joined_text_blocks_with_their_place_in_meta() -> None:
    result = recover_result(_original("a\nb", "c\nd\n"), lines="2-3")
    assert result["content"] == [{"type": "text", "text": "b\nc\n"}]
    assert result["_meta"] == {"mcpsqueeze/lines": {"first": 2, "last": 3, "total_lines": 4}}


def test_recover_refuses_lines_together_with_a_character_window() -> None:
    with pytest.raises(UsageError, match="either lines or offset/length"):
        recover_result(_original("a\nb"), offset=0, lines="1")
