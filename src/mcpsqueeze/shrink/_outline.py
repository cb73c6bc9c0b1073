"""Outline previews of text: the lines a plan values most, every gap folded into a marker that
names its exact line range.

``Outliner`` detects the text's format (strictly: None when unsure, and the caller falls back to
head and tail), asks the plan which lines matter, and packs them:

- the plan's value tiers go in while they fit the budget (the hard maximum);
- its fill lines go in only while the preview stays under ``soft`` characters (the size by value;
  the engine passes ``SOFT_CHARS``, or a fifth of a budget raised above 20,000):
  once the outline shows the text's structure, more body text mostly costs the agent tokens it did
  not ask for, and any folded range is one exact call away (docs/previews.md says why 4000).

Kept lines are verbatim and in order, and markers name 1-based line numbers of the original text
as ``recovery._lines`` numbers them, so shown lines and recovered ranges join back into the
original byte for byte.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence

from mcpsqueeze._lines import split_lines
from mcpsqueeze.shrink._formats import MAX_LINE, Format, detect
from mcpsqueeze.shrink._html import html_reading, looks_like_html
from mcpsqueeze.shrink._notice import RecoveryHint, render_fold_marker, render_outline_header
from mcpsqueeze.shrink._passages import NEVER, Reading, offer, prose_reading
from mcpsqueeze.shrink._plans import Plan, plan_for
from mcpsqueeze.shrink._rank import rank_lines
from mcpsqueeze.shrink._unusual import SELECTIVE

__all__ = ["SOFT_CHARS", "Outliner", "landmarks"]

#: The size by value: fill lines stop here (the budget stays the hard maximum for landmarks).
SOFT_CHARS = 4000
_MAX_INDENT = 8  # a marker takes the indentation of what it folds, up to this


def _pack(
    lines: Sequence[str],
    plan: Plan,
    target: int,
    soft: int,
    hint: RecoveryHint,
    first: int,
    deltas: Sequence[int],
) -> str | None:
    n = len(lines)
    last = first + n - 1
    header_room = len(render_outline_header(plan.label, first, last, f"{last}-{last}", hint)) + 1
    # (a plan's words hold numbers: with more digits, they take that much more room)
    detail = min(max(48, plan.detail), plan.detail * (len(str(last)) + 8) // 8)  # (a marker's words, at most)
    marker_room = len(render_fold_marker(last - 1, last, "x" * detail)) + _MAX_INDENT + 1
    avail = target - header_room
    if avail < 2 * marker_room:
        return None
    # A fold never spans a break of the plan; every other one is left out until the markers of the text
    # with nothing shown leave room for a few lines (``avail`` less a sixteenth, at most 512): a lock
    # file too long for a marker per package gets a marker per two, four ... packages.
    breaks = plan.breaks
    while breaks:
        body = _render(lines, bytearray(n), plan, first, detail, {}, breaks)[0]
        if sum(map(len, body)) <= avail - min(avail // 16, 512):
            break
        breaks = breaks[1::2]
    limit, fill_limit = avail, min(avail, soft - header_room)
    for _attempt in range(4):
        # the kept lines under ``limit`` (value tiers) and ``fill_limit`` (fill), rendered
        kept = bytearray(n)
        markers: dict[tuple[int, int], str | None] = {}  # each fold's marker, across the renders below
        used = marker_room  # nothing kept yet: one marker folds it all (or one per run between breaks)
        if breaks:
            used = sum(map(len, _render(lines, bytearray(kept), plan, first, detail, markers, breaks)[0]))
        offers = [i for tier in plan.tiers for i in tier]
        for _round in range(3):  # markers are shorter than their bound: offer the room they left
            refused, _room = offer(offers, kept, deltas, limit - used, marker_room, False)
            body, example = _render(lines, kept, plan, first, detail, markers, breaks)
            used = sum(map(len, body))
            if len(refused) == len(offers):
                break
            offers = refused
            if not offers or min(map(deltas.__getitem__, offers)) > limit - used:
                break  # nothing refused fits what is left: another round would change nothing
        if used < fill_limit and (fill := plan.fill()):
            offer(fill, kept, deltas, fill_limit - used, marker_room, True)
            body, example = _render(lines, kept, plan, first, detail, markers, breaks)
        size = sum(map(len, body))
        if size <= avail:
            if not any(kept) and not breaks:
                return None
            header = render_outline_header(plan.label, first, last, example or f"{first}-{last}", hint)
            return header + "\n" + "".join(body)
        # Later rounds count markers at their real length, which can grow as a fold shrinks (its
        # indentation, a digit): rare, and then the limits come down by the overshoot.
        limit -= size - avail + marker_room
        fill_limit = min(fill_limit, limit)
    return None


def _render(
    lines: Sequence[str],
    kept: bytearray,
    plan: Plan,
    first: int,
    detail: int,
    markers: dict[tuple[int, int], str | None],
    breaks: Sequence[int] = (),
) -> tuple[list[str], str]:
    """The kept lines and a marker for each run of the others (short runs shown instead, and then
    marked kept; a run ends at each of ``breaks``); and the first marker's range, for the header's
    example call. ``markers`` keeps each run's marker (None: shown instead) for the next render of
    the same lines."""
    n = len(lines)
    body: list[str] = []
    example = ""
    i = 0
    while i < n:
        if kept[i]:
            j = kept.find(0, i)
            j = n if j < 0 else j
            body.extend(lines[i:j])
            i = j
            continue
        j = kept.find(1, i)
        j = n if j < 0 else j
        if breaks:
            k = bisect_right(breaks, i)
            if k < len(breaks) and breaks[k] < j:
                j = breaks[k]
        if (i, j) in markers:
            marker = markers[i, j]
        else:
            marker = render_fold_marker(first + i, first + j - 1, plan.describe(i, j)[:detail])
            marker += "\n" if j < n else ""
            if plan.indent:  # the indentation of the first line it folds (of its first four)
                line = next((lines[k] for k in range(i, min(j, i + 4)) if lines[k].strip()), "")
                marker = line[: min(len(line) - len(line.lstrip(" \t")), _MAX_INDENT)] + marker
            if j - i <= 3 and sum(len(lines[k]) for k in range(i, j)) <= len(marker):
                marker = None  # a short gap costs less shown than marked
            markers[i, j] = marker
        if marker is None:
            body.extend(lines[i:j])
            kept[i:j] = b"\x01" * (j - i)
        else:
            if not example:
                example = f"{first + i}-{first + j - 1}"
            body.append(marker)
        i = j
    return body, example


_PLAIN_LINES = 20  # text of no known format with this many lines gets the plan of plain lines
#: The most characters read by characters (a page of HTML; a quarter of it for prose without usable
#: lines): past that, units and their words would cost more than a preview is worth; the head and
#: tail are kept as before.
_READ_MOST = 16 * 1024 * 1024


def _long_lines(lines: Sequence[str]) -> bool:
    """The lines are too long to outline: some line is over ``MAX_LINE``, or most of the text is in
    lines of a long paragraph each (over 300 characters), so that a line shown is most of a page."""
    lengths = list(map(len, lines[:4000]))
    long = sum(n for n in lengths if n > 300)
    return bool(lengths) and (max(lengths) > MAX_LINE or 2 * long > sum(lengths))


class Outliner:
    """One text's lines, format and plan, worked out once: the engine may pack the same text at a
    few targets while it fits the blocks of a result and their record together.

    A page of HTML, and text whose lines are too long to outline (prose with a paragraph per line, a
    text with no line break), are read by characters instead (``reading``, ``_passages``)."""

    def __init__(self, text: str, terms: Sequence[str] = ()) -> None:
        self.lines = split_lines(text)
        self.format: Format | None = None
        self.plan: Plan | None = None
        self.reading: Reading | None = None
        self.matched = False
        self._deltas: list[int] = []
        if len(text) <= _READ_MOST and looks_like_html(text):
            self.reading = html_reading(text, terms)
            self._strategy = "text:passages-html"
            return
        if len(self.lines) >= 3:
            self.format = detect(text, self.lines)
        if (
            (self.format is None or self.format.name == "markdown")
            and len(text) <= _READ_MOST // 4
            and _long_lines(self.lines)
        ):
            self.reading = prose_reading(text, terms)
            self._strategy = "text:passages-prose"
            return
        if len(self.lines) < 3:
            return
        share = SELECTIVE if len(self.lines) >= _PLAIN_LINES else 1.0
        ranked = rank_lines(self.lines, terms, text=text, share=share) if terms else []
        self.matched = bool(ranked)  # some line matches the call's own words
        if self.format is not None or ranked or len(self.lines) >= _PLAIN_LINES:
            plan = plan_for(self.format, self.lines, ranked, text)
            if self.format is None and not ranked and not plan.inner:
                return  # plain lines with nothing that stands out: head and tail show as much
            self.plan = plan
            fmt = self.format
            self._strategy = "text:outline-" + (
                (fmt.language or fmt.name) if fmt else "query" if ranked else "plain"
            )
            # what showing each line costs: its characters, plus the newline a last line lacks (more
            # than any budget for a line over ``MAX_LINE``, which is never shown)
            deltas = list(map(len, self.lines))
            if not self.lines[-1].endswith("\n"):
                deltas[-1] += 1
            if max(deltas) > MAX_LINE:
                deltas = [d if d <= MAX_LINE else NEVER for d in deltas]
            self._deltas = deltas

    def pack(
        self,
        target: int,
        hint: RecoveryHint,
        *,
        first_line: int = 1,
        first_char: int = 0,
        soft: int = SOFT_CHARS,
    ) -> tuple[str, str] | None:
        """(the outline in at most ``target`` characters, its strategy name), or None when the
        format is unsure (and no line matched the terms) or no outline fits. ``first_line`` and
        ``first_char`` place the text in the original (a later text block of a result)."""
        if self.reading is not None:
            preview = self.reading.pack(target, hint, first=first_char, soft=soft)
        elif self.plan is not None:
            preview = _pack(self.lines, self.plan, target, soft, hint, first_line, self._deltas)
        else:
            return None
        return None if preview is None else (preview, self._strategy)


def landmarks(text: str) -> list[str]:
    """The landmark lines of ``text`` an agent navigates by, without their line ends: definition
    lines of source code, file and hunk headers of diffs, commit headers and subjects of logs,
    section headers and package names of config and lock files, Markdown headings."""
    lines = split_lines(text)
    fmt = detect(text, lines) if len(lines) >= 3 else None
    if fmt is None or fmt.name in ("csv", "tsv", "log", "repeats", "lock"):
        return []  # (no landmarks in tables, logs and unknown text)
    return [lines[i].rstrip("\r\n") for i in plan_for(fmt, lines, [], text).landmarks]
