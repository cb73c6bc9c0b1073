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
from collections.abc import Sequence
from dataclasses import dataclass, field

from mcpsqueeze.shrink._notice import RecoveryHint, render_chars_marker, render_passages_header
from mcpsqueeze.shrink._rank import rank_lines
from mcpsqueeze.shrink._unusual import MATCHES, SELECTIVE, UNUSUAL, rare_word_scores, standouts

__all__ = ["Reading", "Unit", "matching_units", "prose_reading", "split_sentences", "unusual_units"]

_DETAIL = 64  # a marker's words are cut to this many characters
_MAX_UNIT = 600  # a sentence longer than this is cut at a blank into units of about this size
_HEADING_RE = re.compile(r"#{1,6}[ \t]+\S")
# A sentence ends at . ! or ? (closing quotes and brackets after it), then blanks, then what starts a
# sentence: a capital, a digit, a quote or a bracket.
_SENTENCE_END_RE = re.compile(r"[.!?][\"'\u2019\u201d)\]]*[ \t]+(?=[\"'\u2018\u201c(\[]?[A-Z0-9])")


@dataclass(slots=True)
class Unit:
    """One piece of the text: its characters run from ``start`` to the next unit's start."""

    start: int
    text: str  # what it shows (no line end); "" when it is never shown (a page's boilerplate)
    block: int  # units of one block (a paragraph, a list item, a table row) share a line when shown
    fold: str = ""  # what a marker says of it when it is folded; "" for ordinary text
    prefix: str = ""  # shown before its block's first shown unit: "# " for a heading, "- " for an item


@dataclass
class Reading:
    """A text read as units, with the plan of which to show first."""

    label: str  # the header's words for it: "HTML page"
    source: str  # the text read (a unit that follows a character which is no blank is shown joined to it)
    units: list[Unit]
    end: int  # the text's length
    tiers: list[list[int]] = field(default_factory=list)  # unit indexes, best first
    fill: list[int] = field(default_factory=list)  # shown only while the preview is small
    value: list[int] = field(default_factory=list)  # units whose room the size by value counts
    lead: str = ""  # shown right under the header, whatever is kept (a page's title)
    tail: str = ""  # shown at the end (a page's links)
    how: str = ""  # how the shown text stands for its characters: "shown as its text (tags left out)"

    def goal(self, support: int, header: int) -> int:
        """The characters this preview is worth: header, lead and tail, the valued units with a marker
        each, and ``support`` characters of what explains them."""
        marker = len(render_chars_marker(self.end, self.end, "x" * 24)) + 1
        units = self.units
        total = header + len(self.lead) + len(self.tail) + support
        return min(total + sum(len(units[i].text) + 2 + marker for i in set(self.value)), self.end)

    def pack(self, target: int, hint: RecoveryHint, *, first: int = 0, soft: int | None = None) -> str | None:
        """The preview in at most ``target`` characters (fill only while under ``soft``), or None when
        not even the header and the markers fit. ``first`` is the text's offset in the original."""
        units = self.units
        n = len(units)
        if n == 0:
            return None
        edge = first + self.end
        header_room = len(render_passages_header(self.label, first, edge, (edge, edge), hint, self.how)) + 1
        marker_room = len(render_chars_marker(edge, edge, "x" * _DETAIL)) + 1
        fixed = header_room + len(self.lead) + len(self.tail)
        avail = target - fixed
        if avail < 2 * marker_room:
            return None
        costs = [len(u.text) + len(u.prefix) + 1 if u.text else -1 for u in units]
        limit = avail
        fill_limit = avail if soft is None else min(avail, soft - fixed)
        for _attempt in range(4):
            kept = bytearray(n)
            used = marker_room
            for tier in self.tiers:
                used = _offer(tier, kept, costs, used, limit, marker_room, stop=False)
            if used < fill_limit:
                _offer(self.fill, kept, costs, used, fill_limit, marker_room, stop=True)
            body, example = self._render(kept, first)
            if len(body) <= avail:
                head = render_passages_header(
                    self.label, first, edge, example or (first, self.end), hint, self.how
                )
                return head + "\n" + self.lead + body + self.tail
            limit -= len(body) - avail + marker_room
            fill_limit = min(fill_limit, limit)
        return None

    def _render(self, kept: bytearray, first: int) -> tuple[str, tuple[int, int] | None]:
        """The kept units, one line per block, and a marker for each run of the others (a short run is
        shown instead when all of it can be); and the first marker's (offset, length)."""
        units = self.units
        n = len(units)
        out: list[str] = []
        block = -1
        example: tuple[int, int] | None = None
        i = 0
        while i < n:
            if kept[i]:
                unit = units[i]
                if unit.block == block and out:
                    out.append(unit.text if not self.source[unit.start - 1].isspace() else " " + unit.text)
                else:
                    if out:
                        out.append("\n")
                    out.append(unit.prefix + unit.text)
                    block = unit.block
                i += 1
                continue
            j = kept.find(1, i)
            j = n if j < 0 else j
            start, end = units[i].start, units[j].start if j < n else self.end
            marker = render_chars_marker(first + start, first + end, self.describe(i, j)[:_DETAIL])
            run = units[i:j]
            if all(u.text for u in run) and sum(len(u.text) + 1 for u in run) <= len(marker):
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
        labels: dict[str, None] = {}
        blocks: set[int] = set()
        sentences = 0
        for unit in self.units[a:b]:
            if unit.fold:
                labels.setdefault(unit.fold, None)
            elif unit.text:
                blocks.add(unit.block)
                sentences += 1
        words = list(labels)
        if sentences:
            said = "1 sentence" if sentences == 1 else f"{sentences} sentences"
            words.insert(0, said + (f" in {len(blocks)} paragraphs" if len(blocks) > 1 else ""))
        shown = "; ".join(words)
        while len(shown) > _DETAIL and len(words) > 1:  # the last labels give way to how many there are
            words.pop()
            dropped = len(labels) - (len(words) - bool(sentences))
            shown = "; ".join(words) + f"; {dropped} more"
        return shown


def _offer(
    offers: list[int], kept: bytearray, costs: list[int], used: int, limit: int, marker_room: int, stop: bool
) -> int:
    """Keep each offered unit that fits under ``limit``, counting a new marker when it splits a fold in
    two; with ``stop``, stop at the first that does not fit. The room used after."""
    last = len(kept) - 1
    for i in offers:
        if kept[i] or costs[i] < 0:
            continue
        cost = costs[i]
        if not ((i > 0 and kept[i - 1]) or (i < last and kept[i + 1])) and 0 < i < last:
            cost += marker_room  # its fold splits in two
        if used + cost > limit:
            if stop:
                break
            continue
        kept[i] = 1
        used += cost
    return used


def split_sentences(text: str, start: int, end: int) -> list[int]:
    """Where the sentences of ``text[start:end]`` start (``start`` first): after each sentence end, and
    in a sentence longer than ``_MAX_UNIT`` at blanks, so that no unit is much longer than that."""
    starts = [start]
    for match in _SENTENCE_END_RE.finditer(text, start, end):
        starts.append(match.end())
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
    units: list[Unit] = []
    headings: list[int] = []
    leads: list[int] = []
    at = 0
    for line in text.split("\n"):
        body = line.lstrip(" \t\r")
        if body:
            start = at + len(line) - len(body)
            block = len(headings) + len(leads)
            if body[0] == "#" and _HEADING_RE.match(body):
                headings.append(len(units))
                units.append(Unit(start, body.strip(), block))
            else:
                leads.append(len(units))
                stop = at + len(line)
                starts = split_sentences(text, start, stop)
                ends = [*starts[1:], stop]
                units += [Unit(a, text[a:b].strip(), block) for a, b in zip(starts, ends, strict=True)]
        at += len(line) + 1
    if not units:
        return Reading("Text", text, [], len(text))
    units[0].start = 0
    everything = [i for i, u in enumerate(units) if u.text]
    unusual = unusual_units(units)
    matching = matching_units(units, terms)
    return Reading(
        "Text",
        text,
        units,
        len(text),
        tiers=[headings, matching, unusual, everything[:2], leads],
        fill=everything,
        value=[*headings, *matching, *unusual, *everything[:2]],
    )


def unusual_units(units: list[Unit]) -> list[int]:
    """The text units (sentences) that stand out from the others by their words, best first."""
    shown = [i for i, u in enumerate(units) if u.text and not u.fold]
    scores = rare_word_scores([units[i].text for i in shown])
    return [shown[k] for k in standouts(scores, UNUSUAL)]


def matching_units(units: list[Unit], terms: Sequence[str]) -> list[int]:
    """The text units the call's own words match best (BM25, ``_rank``; a word in more than a
    quarter of them is left out), at most ``MATCHES``."""
    if not terms:
        return []
    shown = [i for i, u in enumerate(units) if u.text]
    texts = [units[i].text + "\n" for i in shown]
    return [shown[k] for k in rank_lines(texts, terms, limit=MATCHES, share=SELECTIVE)]
