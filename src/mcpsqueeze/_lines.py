"""Lines of an original's text, numbered exactly as the preview's fold markers name them, for the engine and
every door that reads lines back. Pure and stdlib-only.
"""

from __future__ import annotations

import re
from itertools import accumulate

from mcpsqueeze._errors import UsageError

__all__ = ["MAX_DIGITS", "line_span", "line_starts", "parse_line_range", "split_lines"]

#: Digits in a line number (or any number a recover request names): 18 stay below 2**63 and far below
#: Python's 4,300-digit int limit (ValueError past it); no text has 10**18 lines.
MAX_DIGITS = 18

# str.splitlines also ends lines at these: a text with none of them splits the same way there.
_OTHER_ENDS = "\r\x0b\x0c\x1c\x1d\x1e"
_WIDE_ENDS = "\x85\u2028\u2029"
_RANGE_RE = re.compile(r"[ \t]*([0-9]+)[ \t]*(?:(-)[ \t]*([0-9]*)[ \t]*)?\Z")


def split_lines(text: str) -> list[str]:
    """The lines of ``text``, each with its ``\\n`` (the last without one when the text has none).

    Only ``\\n`` ends a line (a ``\\r`` stays part of its line), so ``"".join(split_lines(t)) == t``
    and line N is ``split_lines(t)[N - 1]``; a text ending in ``\\n`` has no empty last line."""
    if "\n" not in text:
        return [text] if text else []
    if not any(end in text for end in _OTHER_ENDS) and (
        text.isascii() or not any(end in text for end in _WIDE_ENDS)
    ):
        return text.splitlines(keepends=True)  # the same lines, split in C
    parts = text.split("\n")
    lines = [part + "\n" for part in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines


def parse_line_range(spec: str) -> tuple[int, int | None]:
    """``"120-180"`` -> (120, 180); ``"120"`` -> (120, 120); ``"120-"`` -> (120, None: to the end).

    Lines count from 1; a range that ends before it starts is a usage error."""
    match = _RANGE_RE.match(spec)
    if match is None:
        raise UsageError(
            f"lines {spec[:80]!r} must be a line range such as '120-180' (or '120' for one line, "
            "'120-' to the end); lines count from 1."
        )
    if any(group and len(group) > MAX_DIGITS for group in (match.group(1), match.group(3))):
        raise UsageError(f"lines: a line number has at most {MAX_DIGITS} digits; no text is that long.")
    start = int(match.group(1))
    end: int | None = start
    if match.group(2):
        end = int(match.group(3)) if match.group(3) else None
    if start < 1:
        raise UsageError(f"lines {spec!r}: lines count from 1, so start at 1 or later.")
    if end is not None and end < start:
        raise UsageError(f"lines {spec!r} ends before it starts; write the smaller number first.")
    return start, end


def line_starts(text: str) -> list[int]:
    """Where each line of ``text`` starts (as ``split_lines`` splits it), then ``len(text)``: the
    places of any number of line ranges, found once (the lines themselves are not kept)."""
    return [0, *accumulate(map(len, split_lines(text)))]


def line_span(text: str, spec: str, starts: list[int] | None = None) -> tuple[int, int, int, int, int]:
    """Where the lines ``spec`` names lie in ``text`` (start and end offsets of their exact text), with
    (first, last, total lines); past the end stops at the last line, a start past it is a usage error."""
    start, end = parse_line_range(spec)
    starts = line_starts(text) if starts is None else starts
    total = len(starts) - 1
    if start > total:
        raise UsageError(
            f"lines {spec!r} start past the end of the text, which has {total} line(s); "
            f"ask for lines 1-{total} or fewer."
        )
    last = total if end is None else min(end, total)
    return starts[start - 1], starts[last], start, last, total
