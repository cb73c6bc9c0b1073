"""Reading an outline preview back: its fold markers, and the original rebuilt from them."""

from __future__ import annotations

import re

from mcpsqueeze._lines import line_span, split_lines

FOLD = re.compile(r"^[ \t]*\[lines? (\d+)(?:-(\d+))? folded(?:: ([^\]]*))?\]\n?\Z")
HEADER = re.compile(r"^\[mcpsqueeze\] Outline of (?:(\d+) lines|lines (\d+)-(\d+)) \(")


def folds(preview: str) -> list[tuple[int, int, str]]:
    """(first, last, words) of every fold marker in ``preview``."""
    found = []
    for line in split_lines(preview)[1:]:
        match = FOLD.match(line)
        if match:
            first = int(match.group(1))
            found.append((first, int(match.group(2) or first), match.group(3) or ""))
    return found


def rebuild(preview: str, original: str, first_line: int = 1) -> str:
    """The original as the preview claims it: shown lines as they are, each marker replaced by the
    lines it names (read back with ``line_span`` from ``original``, the joined text). Asserts that
    shown lines and folded ranges follow each other without a gap or an overlap."""
    lines = split_lines(preview)
    assert HEADER.match(lines[0]), lines[0]
    out: list[str] = []
    expected = first_line
    for line in lines[1:]:
        match = FOLD.match(line)
        if match is None:
            out.append(line)
            expected += 1
            continue
        first = int(match.group(1))
        last = int(match.group(2) or first)
        assert first == expected, (first, expected, line)
        begin, end, got_first, got_last, _total = line_span(original, f"{first}-{last}")
        assert (got_first, got_last) == (first, last)
        out.append(original[begin:end])
        expected = last + 1
    return "".join(out)
