"""Previews by characters: the passages of a text a reader needs, every gap folded into a marker that
names its exact character range.

Texts without usable lines (a page minified to one line, prose whose paragraphs are single lines of a
thousand characters, a page of HTML) cannot be outlined line by line: a line is all of it, or a whole
paragraph. So the text is read as **units** that tile it: sentences, headings, and, in a page, its
boilerplate (head, scripts, navigation, footer). Each unit runs from its start to the next one's, and
shows its reader text: the characters themselves for plain text, the text a browser shows for HTML.
A plan (a ``Reading``) ranks the units; the packing keeps the best while they fit and folds each run of
the others into ``[chars A-B folded: ...]``, where A and B are offsets into the original as recover's
``offset``/``length`` take them, so every folded range is one exact call away.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from itertools import accumulate, pairwise

from mcpsqueeze.shrink._notice import RecoveryHint, render_chars_marker, render_passages_header
from mcpsqueeze.shrink._rank import rank_lines
from mcpsqueeze.shrink._unusual import MATCHES, SELECTIVE, rare_word_scores, standouts

__all__ = ["NEVER", "Reading", "Sentences", "offer", "prose_reading"]

_DETAIL = 64  # a marker's words are cut to this many characters
NEVER = 1 << 62  # the room a unit that is never shown needs: more than any budget
_MAX_UNIT = 600  # a sentence longer than this is cut at a blank into units of about this size
_HEADING_RE = re.compile(r"#{1,6}[ \t]+\S")
# A sentence ends at . ! or ? (closing quotes and brackets after it), then blanks, then what starts a
# sentence: a capital, a digit, a quote or a bracket.
_SENTENCE_END_RE = re.compile(r"[.!?][\"'\u2019\u201d)\]]*[ \t]+(?=[\"'\u2018\u201c(\[]?[A-Z0-9])")
_ASCII_END_RE = re.compile(rb"\.[\"')\]]*[ \t]+(?=[\"'(\[]?[A-Z0-9])")  # (ASCII: "!" and "?" read as ".")
_STOPS = bytes.maketrans(b"!?", b"..")


@dataclass
class Reading:
    """A text read as units, with the plan of which to show first.

    A unit's characters run from its start to the next unit's start; it shows its text ("" when it is
    never shown: a page's boilerplate, which says ``folds[i]`` in a marker instead). Units of one block
    (a paragraph, a list item, a table row) share a line when shown, led by the block's prefix ("# " for
    a heading, "- " for an item); blocks are numbered in the order of the text."""

    label: str  # the header's words for it: "HTML page"
    source: str  # the text read (a unit that follows a character which is no blank is shown joined to it)
    starts: list[int]
    texts: list[str]
    blocks: list[int]
    folds: dict[int, str] = field(default_factory=dict)  # unit -> what a marker says of it (boilerplate)
    prefixes: dict[int, str] = field(default_factory=dict)  # block -> shown before its first shown unit
    tiers: list[list[int]] = field(default_factory=list)  # unit indexes, best first
    fill: list[int] = field(default_factory=list)  # shown only while the preview is small
    value: list[int] = field(default_factory=list)  # units whose room the size by value counts
    lead: str = ""  # shown right under the header, whatever is kept (a page's title)
    tail: str = ""  # shown at the end (a page's links)
    how: str = ""  # how the shown text stands for its characters: "shown as its text (tags left out)"

    def goal(self, support: int, header: int) -> int:
        """The characters this preview is worth: header, lead and tail, the valued units with a marker
        each, and ``support`` characters of what explains them."""
        marker = len(render_chars_marker(len(self.source), len(self.source), "x" * 24)) + 1
        total = header + len(self.lead) + len(self.tail) + support
        return min(total + sum(len(self.texts[i]) + 2 + marker for i in set(self.value)), len(self.source))

    def pack(self, target: int, hint: RecoveryHint, *, first: int, soft: int) -> str | None:
        """The preview in at most ``target`` characters (fill only while under ``soft``), or None when
        not even the header and the markers fit. ``first`` is the text's offset in the original."""
        n = len(self.starts)
        if n == 0:
            return None
        edge = first + len(self.source)
        header_room = len(render_passages_header(self.label, first, edge, (edge, edge), hint, self.how)) + 1
        marker_room = len(render_chars_marker(edge, edge, "x" * _DETAIL)) + 1
        fixed = header_room + len(self.lead) + len(self.tail)
        avail = target - fixed
        if avail < 2 * marker_room:
            return None
        costs = self.sums.costs
        limit = avail
        fill_limit = min(avail, soft - fixed)
        for _attempt in range(4):
            kept = bytearray(n)
            offers = [i for tier in self.tiers for i in tier]
            _, room = offer(offers, kept, costs, limit - marker_room, marker_room, False)
            if limit - room < fill_limit:
                offer(self.fill, kept, costs, fill_limit - limit + room, marker_room, True)
            body, example = self._render(kept, first)
            if len(body) <= avail:
                head = render_passages_header(
                    self.label, first, edge, example or (first, len(self.source)), hint, self.how
                )
                return head + "\n" + self.lead + body + self.tail
            limit -= len(body) - avail + marker_room
            fill_limit = min(fill_limit, limit)
        return None

    def plan(self, headings: list[int], firsts: list[int], head: int, terms: Sequence[str]) -> Reading:
        """This reading, planned: its headings; the units of text the call's own words match best (BM25,
        ``_rank``; a word in more than a quarter of them is left out), at most ``MATCHES``; those that
        stand out from the others by their words; the first ``head``; then ``firsts`` (each block's
        first unit). Every unit of text is fill."""
        texts = self.texts
        shown = [i for i, said in enumerate(texts) if said]
        unusual = [shown[k] for k in standouts(rare_word_scores([texts[i] for i in shown]))]
        matching: list[int] = []
        if terms:
            lines = [texts[i] + "\n" for i in shown]
            matching = [shown[k] for k in rank_lines(lines, terms, limit=MATCHES, share=SELECTIVE)]
        self.tiers = [headings, matching, unusual, shown[:head], firsts]
        self.fill = shown
        self.value = [*headings, *matching, *unusual, *shown[:head]]
        return self

    @cached_property
    def sums(self) -> _Sums:
        """The running sums that cost a run of units and describe it in a few steps."""
        return _Sums(self)

    def _render(self, kept: bytearray, first: int) -> tuple[str, tuple[int, int] | None]:
        """The kept units, one line per block, and a marker for each run of the others (a short run is
        shown instead when all of it can be); and the first marker's (offset, length)."""
        starts, texts, blocks, source = self.starts, self.texts, self.blocks, self.source
        sums = self.sums
        n = len(starts)
        out: list[str] = []
        block = -1
        example: tuple[int, int] | None = None
        i = 0
        while i < n:
            if kept[i]:
                if blocks[i] == block and out:
                    out.append(texts[i] if not source[starts[i] - 1].isspace() else " " + texts[i])
                else:
                    if out:
                        out.append("\n")
                    block = blocks[i]
                    out.append(self.prefixes.get(block, "") + texts[i])
                i += 1
                continue
            j = kept.find(1, i)
            j = n if j < 0 else j
            start, end = starts[i], starts[j] if j < n else len(self.source)
            marker = render_chars_marker(first + start, first + end, self.describe(i, j)[:_DETAIL])
            if sums.empty[j] == sums.empty[i] and sums.chars[j] - sums.chars[i] <= len(marker):
                kept[i:j] = b"\x01" * (j - i)  # a short run costs less shown than marked
                continue
            if out:
                out.append("\n")
            out.append(marker)
            block = -1
            if example is None:
                example = (first + start, end - start)
            i = j
        if out:
            out.append("\n")
        return "".join(out), example

    def describe(self, a: int, b: int) -> str:
        """What the units ``a`` to ``b - 1`` hold: their boilerplate, then how many sentences (units of
        text), and in how many paragraphs (blocks) when more than one."""
        sums = self.sums
        folds = sums.folded
        labels = dict.fromkeys(self.folds[i] for i in folds[bisect_left(folds, a) : bisect_left(folds, b)])
        sentences = (b - a) - (sums.empty[b] - sums.empty[a])
        words = list(labels)
        if sentences:
            # (blocks are numbered in order: a run's blocks are those its units start, and the block of
            # its first unit of text when that unit does not start one)
            blocks = sums.opens[b] - sums.opens[a]
            shown = sums.shown
            k = shown[bisect_left(shown, a)]
            blocks += not (sums.opens[k + 1] - sums.opens[k])
            said = "1 sentence" if sentences == 1 else f"{sentences} sentences"
            words.insert(0, said + (f" in {blocks} paragraphs" if blocks > 1 else ""))
        shown_words = "; ".join(words)
        while len(shown_words) > _DETAIL and len(words) > 1:  # the last labels give way to how many
            words.pop()
            dropped = len(labels) - (len(words) - bool(sentences))
            shown_words = "; ".join(words) + f"; {dropped} more"
        return shown_words


class _Sums:
    """Per unit, what a run of units sums to, as running sums (a run ``a`` to ``b`` is ``x[b] - x[a]``):
    units that show nothing, characters shown (each with a blank), units of text that start a block; and
    the indexes of the units of text and of boilerplate, and each unit's cost when shown."""

    __slots__ = ("chars", "costs", "empty", "folded", "opens", "shown")

    def __init__(self, reading: Reading) -> None:
        texts, blocks = reading.texts, reading.blocks
        lengths = list(map(len, texts))
        self.shown = [i for i, size in enumerate(lengths) if size]
        self.folded = sorted(reading.folds)
        self.empty = [0, *accumulate(not size for size in lengths)]
        self.chars = [0, *accumulate(size + 1 if size else 0 for size in lengths)]
        opening = [0] * len(texts)
        last = None
        for i in self.shown:
            if blocks[i] != last:
                opening[i] = 1
                last = blocks[i]
        self.opens = [0, *accumulate(opening)]
        prefixes = reading.prefixes
        self.costs = [size + 1 if size else NEVER for size in lengths]
        if prefixes:
            for i in self.shown:
                self.costs[i] += len(prefixes.get(blocks[i], ""))


def offer(
    offers: Iterable[int], kept: bytearray, costs: Sequence[int], room: int, marker_room: int, fill: bool
) -> tuple[list[int], int]:
    """Keep each offered unit (a line, a sentence) that fits in ``room`` characters, in order, counting
    a new marker at its longest when the unit splits a fold in two; (the units refused, the room left).
    ``costs`` are the units' characters (``NEVER`` for one never shown). With ``fill``, stop at the
    first unit that does not fit, or once no room is left."""
    refused: list[int] = []
    last = len(kept) - 1
    if fill:
        for i in offers:
            if room <= 0:
                break
            if kept[i]:
                continue
            delta = costs[i]
            if delta <= room and not ((i == 0 or kept[i - 1]) or (i == last or kept[i + 1])):
                delta += marker_room  # its fold splits in two
            if delta > room:
                break
            kept[i] = 1
            room -= delta
        return refused, room
    refuse = refused.append
    for i in offers:  # (most offers of a big text are refused: that path is kept short)
        if kept[i]:
            continue
        delta = costs[i]
        if delta > room:
            refuse(i)
            continue
        if not ((i == 0 or kept[i - 1]) or (i == last or kept[i + 1])):
            delta += marker_room  # its fold splits in two
            if delta > room:
                refuse(i)
                continue
        kept[i] = 1
        room -= delta
    return refused, room


class Sentences:
    """Where the sentences of a text's lines or blocks start. The sentence ends of the whole text are
    found at once: an end is followed by blanks on its own line and a capital before any tag, so
    none spans a line end or a tag, and a line's or a block's are those inside its range. (In ASCII
    text, ``!`` and ``?`` are read as ``.`` in a copy of its bytes: a regex that starts with one
    character finds it much faster than one of three.)"""

    __slots__ = ("_ends", "_next", "_text")

    def __init__(self, text: str) -> None:
        self._text = text
        if text.isascii():
            read = _ASCII_END_RE.finditer(text.encode("ascii").translate(_STOPS))
            self._ends = [match.end() for match in read]
        else:
            self._ends = [match.end() for match in _SENTENCE_END_RE.finditer(text)]
        self._ends.append(len(text) + 1)  # (past any range)
        self._next = 0  # where the last range's ends stopped: ranges are mostly asked in order

    def split(self, start: int, end: int) -> list[int]:
        """Where the sentences of ``text[start:end]`` start (``start`` first): after each sentence end,
        and in a sentence longer than ``_MAX_UNIT`` at blanks, so that no unit is much longer."""
        ends = self._ends
        lo = self._next
        if ends[lo] <= start or (lo and ends[lo - 1] > start):
            lo = bisect_right(ends, start)
        if ends[lo] >= end:
            self._next = lo
            starts = [start]
        else:
            hi = self._next = bisect_left(ends, end, lo)
            starts = [start, *ends[lo:hi]]
        if end - start <= _MAX_UNIT:
            return starts
        text = self._text
        out: list[int] = []
        for a, b in zip(starts, [*starts[1:], end], strict=True):
            out.append(a)
            while b - a > _MAX_UNIT:
                cut = text.rfind(" ", a + _MAX_UNIT // 2, a + _MAX_UNIT)
                if cut < 0:
                    cut = a + _MAX_UNIT
                out.append(cut + 1)
                a = cut + 1
        return [s for k, s in enumerate(out) if k == 0 or s > out[k - 1]]


def prose_reading(text: str, terms: Sequence[str] = ()) -> Reading:
    """Plain text read as units: each line a block (a Markdown heading its own unit), each block's
    sentences. Shown text is the characters themselves, blanks at the ends left out."""
    starts: list[int] = []
    texts: list[str] = []
    blocks: list[int] = []
    headings: list[int] = []
    leads: list[int] = []
    sentences = Sentences(text)
    at = 0
    for line in text.split("\n"):
        body = line.lstrip(" \t\r")
        if body:
            start = at + len(line) - len(body)
            block = len(headings) + len(leads)
            heading = body[0] == "#" and _HEADING_RE.match(body) is not None  # (one unit)
            (headings if heading else leads).append(len(starts))
            stop = at + len(line)
            found = [start] if heading else sentences.split(start, stop)
            starts += found
            texts += [text[a:b].strip() for a, b in pairwise([*found, stop])]
            blocks += [block] * len(found)
        at += len(line) + 1
    if not starts:
        return Reading("Text", text, [], [], [])
    starts[0] = 0
    return Reading("Text", text, starts, texts, blocks).plan(headings, leads, 2, terms)
