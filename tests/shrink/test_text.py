"""Plain text keeps a head and a tail around one exact marker."""

from __future__ import annotations

import re

import pytest

from mcpsqueeze._errors import ShrinkError
from mcpsqueeze.shrink import RecoveryHint, render_text_marker, shrink_texts

MARKER = re.compile(r"\[\.\.\.truncated (\d+) characters; recover with [^\]]*\]")


WORDS = ("amber", "basil", "cedar", "delta", "ember", "fjord", "grove", "heron", "indigo", "juniper", "kelp")


def _lines(n: int) -> str:
    """Lines of no known format, none repeating another (repeats would make it a log)."""
    return "".join(
        f"line {i:05d} {WORDS[i % 7]} {WORDS[i % 11]} {WORDS[i % 5]} {WORDS[(i // 77) % 11]} here\n"
        for i in range(n)
    )


def test_text_under_budget_is_left_alone(hint: RecoveryHint) -> None:
    assert shrink_texts(["short", "text"], 1024, hint) is None
    assert shrink_texts(["x" * 1024], 1024, hint) is None


def test_long_text_keeps_head_and_tail_with_an_exact_count(hint: RecoveryHint) -> None:
    text = _lines(2000)
    result = shrink_texts([text], 4000, hint)
    assert result is not None
    (out,) = result.texts
    assert len(out) <= 4000
    match = MARKER.search(out)
    assert match is not None
    head, tail = out[: match.start()], out[match.end() :]
    assert text.startswith(head) and text.endswith(tail.lstrip("\n"))
    assert int(match.group(1)) == len(text) - len(head) - len(tail.lstrip("\n"))
    assert result.notice is None and result.report.pruned


def test_text_is_cut_at_line_boundaries(hint: RecoveryHint) -> None:
    result = shrink_texts([_lines(3000)], 5000, hint)
    assert result is not None
    out = result.texts[0]
    head, _, rest = out.partition("[...truncated")
    tail = rest.split("]\n", 1)[1]
    assert head.endswith("\n") and tail.startswith("line ")
    assert all(line.startswith("line ") and line.endswith("here") for line in (head + tail).splitlines())


def test_a_single_long_line_is_cut_mid_line(hint: RecoveryHint) -> None:
    text = "ab" * 20000
    result = shrink_texts([text], 2000, hint)
    assert result is not None
    assert len(result.texts[0]) <= 2000 and MARKER.search(result.texts[0])


def test_marker_is_the_public_renderer(hint: RecoveryHint) -> None:
    result = shrink_texts(["x" * 5000], 1024, hint)
    assert result is not None
    match = MARKER.search(result.texts[0])
    assert match is not None
    assert match.group(0) == render_text_marker(int(match.group(1)), hint)


def test_malformed_json_and_nan_are_treated_as_text(hint: RecoveryHint) -> None:
    for text in (
        '{"a": [1, 2' + ", 3" * 2000,
        "[NaN, 1" + ", 1" * 2000 + "]",
        "[Infinity" + ",1" * 3000 + "]",
    ):
        result = shrink_texts([text], 1024, hint)
        assert result is not None
        assert MARKER.search(result.texts[0]), text[:20]
        assert result.report.strategy == "text:head-tail"


def test_too_small_a_budget_raises_shrink_error(hint: RecoveryHint) -> None:
    with pytest.raises(ShrinkError):
        shrink_texts(["x" * 5000], 100, hint)
