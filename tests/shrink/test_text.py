"""Text with no structure to show (a few lines of no known format) keeps a head and a tail around one
exact marker; a long single line is read by characters instead."""

from __future__ import annotations

import re

import pytest

from mcpsqueeze._errors import ShrinkError
from mcpsqueeze.shrink import RecoveryHint, render_text_marker, shrink_texts

MARKER = re.compile(r"\[\.\.\.truncated (\d+) characters; recover with [^\]]*\]")


WORDS = ("amber", "basil", "cedar", "delta", "ember", "fjord", "grove", "heron", "indigo", "juniper", "kelp")


def _lines(n: int, width: int = 4) -> str:
    """Lines of no known format, none repeating another (repeats would make it a log); fewer than 20
    of them (more get the plan of plain lines), each ``width`` times a few words."""
    return "".join(
        f"line {i:05d}"
        + f" {WORDS[i % 7]} {WORDS[i % 11]} {WORDS[i % 5]} {WORDS[(i // 77) % 11]}" * width
        + " here\n"
        for i in range(n)
    )


def test_text_under_budget_is_left_alone(hint: RecoveryHint) -> None:
    assert shrink_texts(["short", "text"], 1024, hint) is None
    assert shrink_texts(["x" * 1024], 1024, hint) is None


def test_long_text_keeps_head_and_tail_with_an_exact_count(hint: RecoveryHint) -> None:
    text = _lines(19, 8)
    result = shrink_texts([text], 2000, hint)
    assert result is not None
    (out,) = result.texts
    assert len(out) <= 2000
    match = MARKER.search(out)
    assert match is not None
    head, tail = out[: match.start()], out[match.end() :]
    assert text.startswith(head) and text.endswith(tail.lstrip("\n"))
    assert int(match.group(1)) == len(text) - len(head) - len(tail.lstrip("\n"))
    assert result.notice is None and result.report.pruned


def test_text_is_cut_at_line_boundaries(hint: RecoveryHint) -> None:
    result = shrink_texts([_lines(19, 9)], 2500, hint)
    assert result is not None
    out = result.texts[0]
    head, _, rest = out.partition("[...truncated")
    tail = rest.split("]\n", 1)[1]
    assert head.endswith("\n") and tail.startswith("line ")
    assert all(line.startswith("line ") and line.endswith("here") for line in (head + tail).splitlines())


def test_a_single_long_line_is_read_by_characters_with_exact_ranges(hint: RecoveryHint) -> None:
    text = "ab" * 20000
    result = shrink_texts([text], 2000, hint)
    assert result is not None and result.report.strategy == "text:passages-prose"
    preview = result.texts[0]
    assert len(preview) <= 2000
    ranges = [(int(a), int(b)) for a, b in re.findall(r"\[chars (\d+)-(\d+) folded", preview)]
    assert ranges and ranges[-1][1] == len(text)
    shown = "".join(line for line in preview.split("\n")[1:] if not line.startswith("[chars "))
    assert len(shown) + sum(b - a for a, b in ranges) == len(text)


def test_marker_is_the_public_renderer(hint: RecoveryHint) -> None:
    result = shrink_texts([_lines(19, 8)], 1024, hint)
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
        assert result.report.strategy == "text:passages-prose", text[:20]
        assert result.notice is None and "truncation" not in result.texts[0]


def test_too_small_a_budget_raises_shrink_error(hint: RecoveryHint) -> None:
    with pytest.raises(ShrinkError):
        shrink_texts(["x" * 5000], 100, hint)
