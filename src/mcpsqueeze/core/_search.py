"""Search inside a stored original, for recover: ``grep`` (a regular expression) and ``search`` (BM25).

The answer is the matching lines, numbered as recover's ``lines`` numbers them, with context; or, for
JSON, the matching values with their RFC 6901 pointers; it fits a character budget and names the next
page (``skip``). Pure (a clock only for the time cap). grep runs on RE2: linear in the text whatever
the pattern (no backreferences or lookaround), per line, without capture groups (so it stays on its
DFA); the pattern's length, RE2's memory, the text's size and the time are capped. ``search`` ranks with
the BM25 that ranks preview lines (`shrink._rank`)."""

from __future__ import annotations

import bisect
import json
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from .._errors import UsageError
from .._lines import split_lines

__all__ = [
    "DEFAULT_BUDGET",
    "DEFAULT_CONTEXT",
    "MAX_CONTEXT",
    "Found",
    "SearchLimits",
    "check_pattern",
    "grep",
    "search",
]

DEFAULT_CONTEXT = 2
MAX_CONTEXT = 20
#: Characters of one answer: a few dozen matches with context, well under any client's result limit.
DEFAULT_BUDGET = 8000
MAX_PATTERN = 1000  # characters of a grep pattern
_CHUNK = 1 << 20  # bytes searched between two looks at the clock
_CLOCK_MATCHES = 1024  # matching lines between two looks at the clock (one RE2 call each, ~3 us)
_MATCH_LINE = 400  # characters shown of a matching line (around the match) or a JSON value
_CONTEXT_LINE = 200  # characters shown of a context line
_LABEL = 80  # characters of the pattern or query repeated in the answer's first line
_FOOTER = 160  # characters kept free for the last line (how to page, or where the time cap stopped)
_POINTER_WORDS = 80  # characters of a JSON value's pointer (its end) a search ranks it by, beside it
_LINK = 100  # bytes a search holds per key or index of a JSON original (its path link)
_SLOT = 50  # bytes a search holds per value beside its text


@dataclass(frozen=True)
class SearchLimits:
    """What one search may cost: seconds of matching, and the size of the text (UTF-8 bytes)."""

    seconds: float = 1.0
    max_bytes: int = 64 << 20
    max_mem: int = 8 << 20  # RE2's memory for the compiled pattern: a larger one is refused


@dataclass(frozen=True)
class Found:
    """One page of a search's answer: ``text`` for the agent, and what it holds for the code."""

    text: str
    hits: tuple[int | str, ...]  # the matches shown: line numbers (from 1), or JSON pointers as shown
    total: int  # matches found (all of them, unless the time cap stopped the search)
    skip: int  # matches before this page
    next_skip: int | None  # the skip of the next page, None on the last
    complete: bool  # False when the time cap stopped the search before the end

    def meta(self) -> dict[str, Any]:
        """The answer's place, for ``_meta["mcpsqueeze/search"]``."""
        meta: dict[str, Any] = {"total": self.total, "skip": self.skip, "shown": len(self.hits)}
        if self.next_skip is not None:
            meta["next_skip"] = self.next_skip
        if not self.complete:
            meta["complete"] = False
        return meta


_RE2_SYNTAX = (
    "grep uses RE2 syntax, which runs in linear time (no backtracking): Python's re syntax without "
    "backreferences or lookaround, repetition counts up to 1000, and \\w, \\d, \\b ASCII only"
)


def check_pattern(pattern: object, ignore_case: bool = False, limits: SearchLimits = SearchLimits()) -> Any:
    """The compiled RE2 pattern (per line: ``^``/``$`` at each line, no match across a line end), or a
    UsageError that says why RE2 cannot run it. Doors call it before loading the original."""
    if not isinstance(pattern, str):
        raise UsageError("grep must be a string: a regular expression such as 'def parse_\\w+'")
    if not pattern:
        raise UsageError("grep is empty; give a regular expression such as 'def parse_\\w+'")
    if len(pattern) > MAX_PATTERN:
        raise UsageError(
            f"grep is {len(pattern):,} characters long; patterns of at most {MAX_PATTERN:,} characters "
            "run here. Search for a shorter part of it."
        )
    import re2  # 12 ms: only searches pay for it

    options = re2.Options()
    options.log_errors = False
    options.never_nl = True  # grep is line by line
    options.never_capture = True  # keeps RE2 on its DFA: only where a match starts is used
    options.case_sensitive = not ignore_case
    options.max_mem = limits.max_mem
    try:
        return re2.compile("(?m)" + pattern, options)
    except re2.error as exc:
        detail = (
            exc.args[0].decode("utf-8", "replace")
            if exc.args and isinstance(exc.args[0], bytes)
            else str(exc)
        )
        if ("invalid escape sequence: \\" in detail and detail[-1:].isdigit()) or "(?P=" in pattern:
            detail += ", a backreference, which RE2 does not run"
        elif any(look in detail for look in ("(?=", "(?!", "(?<=", "(?<!")):
            detail += ", a lookaround, which RE2 does not run"
        elif "too large" in detail:
            detail += " (RE2 refuses patterns whose automaton exceeds its memory cap)"
        raise UsageError(f"grep {_label(pattern)} cannot run: {detail}. {_RE2_SYNTAX}.") from None


def grep(
    original: str | dict[str, Any] | list[Any],
    pattern: str,
    *,
    ignore_case: bool = False,
    context: int = DEFAULT_CONTEXT,
    skip: int = 0,
    budget: int = DEFAULT_BUDGET,
    base: str = "",
    limits: SearchLimits = SearchLimits(),
) -> Found:
    """The lines of a text (or the values of a JSON document, under pointer ``base``) that ``pattern``
    matches, in order, with ``context`` lines around each, one page of at most ``budget`` characters
    from match ``skip`` on (``context`` and ``skip`` as the request bounds them)."""
    regexp = check_pattern(pattern, ignore_case, limits)
    label = f"grep {_label(pattern)}{'i' if ignore_case else ''}"  # /proxy/i: case ignored
    if isinstance(original, str):
        data = _encoded(original, limits)
        lines = split_lines(original)
        found, stopped = _matching_lines(data, regexp, time.monotonic() + limits.seconds)
        return _render_lines(lines, found, stopped, label, regexp, context, skip, budget, ordered=True)
    leaves = _Values(original, base, limits)
    data = _encoded("\n".join(leaves.texts), limits)
    firsts: list[int] = []  # the first line of each value in the joined text
    at = 0
    for text in leaves.texts:
        firsts.append(at)
        at += text.count("\n") + 1
    matched, stopped = _matching_lines(data, regexp, time.monotonic() + limits.seconds)
    values: list[int] = []
    for line in matched:  # a value with several lines is one match
        index = bisect.bisect_right(firsts, line) - 1
        if not values or values[-1] != index:
            values.append(index)
    stopped_value = None if stopped is None else bisect.bisect_right(firsts, stopped) - 1
    return _render_values(leaves, values, stopped_value, label, regexp, skip, budget)


def search(
    original: str | dict[str, Any] | list[Any],
    query: str,
    *,
    context: int = DEFAULT_CONTEXT,
    skip: int = 0,
    budget: int = DEFAULT_BUDGET,
    base: str = "",
    limits: SearchLimits = SearchLimits(),
) -> Found:
    """The lines of a text (or the values of a JSON document) that hold the words of ``query``, best
    BM25 score first (the ranking previews use; case never matters), paged as `grep` pages."""
    from ..shrink import rank_lines, search_terms  # the engine (~100 ms): only searches load it

    terms = search_terms(query)
    if not terms:
        raise UsageError(
            f"search {query!r} has no word to look for; give words of 2 or more letters or digits, "
            "such as 'parse error' (grep takes a regular expression)"
        )
    label = f'search "{_cut(query, _LABEL)}", best first'
    where = _Densest(terms)
    if isinstance(original, str):
        _encoded(original, limits)
        lines = split_lines(original)
        ranked = rank_lines(lines, terms, limit=len(lines), text=original)
        return _render_lines(lines, ranked, None, label, where, context, skip, budget, ordered=False)
    leaves = _Values(original, base, limits)
    documents = [
        f"{leaves.pointer(i, _POINTER_WORDS, tail=True)} {text}".replace("\n", " ") + "\n"
        for i, text in enumerate(leaves.texts)
    ]
    joined = "".join(documents)
    _encoded(joined, limits)
    ranked = rank_lines(documents, terms, limit=len(documents), text=joined)
    return _render_values(leaves, ranked, None, label, where, skip, budget)


@dataclass(frozen=True)
class _At:
    at: int

    def start(self) -> int:
        return self.at


class _Densest:
    """Where a search's words are densest in a line, as a compiled pattern says where it matches: a long
    line is shown around the stretch holding the most of its words, each counted once and weighted by its
    rarity in the line; ASCII letters match in any case."""

    _MOST = 2000  # occurrences of one word looked at in a line

    def __init__(self, terms: Sequence[str], reach: int = _MATCH_LINE // 2) -> None:
        self.terms = [term.encode("utf-8", "surrogatepass") for term in terms]
        self.reach = reach

    def search(self, data: bytes) -> _At | None:
        lowered = data.lower()
        hits: list[tuple[int, int]] = []  # (where, which word)
        counts: list[int] = []
        for k, term in enumerate(self.terms):
            found = 0
            at = lowered.find(term)
            while at >= 0 and found < self._MOST:
                hits.append((at, k))
                found += 1
                at = lowered.find(term, at + 1)
            counts.append(found)
        if not hits:
            return None
        hits.sort()
        weight = [1 / c if c else 0.0 for c in counts]
        inside = [0] * len(self.terms)
        best, best_at, left = -1.0, hits[0][0], 0
        for at, k in hits:
            inside[k] += 1
            while hits[left][0] < at - self.reach:
                inside[hits[left][1]] -= 1
                left += 1
            score = sum(w for w, n in zip(weight, inside, strict=True) if n)
            if score > best:
                best, best_at = score, hits[left][0]
        return _At(best_at)


def _encoded(text: str, limits: SearchLimits) -> bytes:
    data = text.encode("utf-8", "surrogatepass")
    if len(data) > limits.max_bytes:
        raise UsageError(
            f"the original is {len(data):,} bytes, over the {limits.max_bytes:,} bytes one search reads; "
            "search a part of it: a JSON pointer to the part (pointer), then grep or search there"
        )
    return data


def _matching_lines(data: bytes, regexp: Any, deadline: float) -> tuple[list[int], int | None]:
    """The index of each line with a match, in order; and None, or the line where the time cap stopped
    the search. One RE2 search per matching line, from the start of the next, in chunks of lines so the
    clock is looked at every megabyte."""
    size = len(data)
    lines = data.count(b"\n", 0) + (1 if size and not data.endswith(b"\n") else 0)
    found: list[int] = []
    pos = line = counted = 0
    while pos < size:
        end = size if size - pos <= _CHUNK else data.find(b"\n", pos + _CHUNK)
        if end < 0:
            end = size
        while pos <= end:
            match = regexp.search(data, pos, end)
            if match is None:
                break
            at = match.start()
            line += data.count(b"\n", counted, at)
            counted = at
            if line >= lines:  # an empty match after the last line end: no line is there
                break
            found.append(line)
            newline = data.find(b"\n", at, end)
            if newline < 0:
                break
            pos = newline + 1
            if not len(found) % _CLOCK_MATCHES and time.monotonic() > deadline:
                return found, line + 1
        pos = end + 1
        if pos < size and time.monotonic() > deadline:
            return found, line + data.count(b"\n", counted, pos)
    return found, None


class _Values:
    """The scalars of a JSON document (under pointer `base`), in document order: each one's text and its
    place in a tree of path links. Pointers are spelled out only for what a page shows (spelled out for
    all, long keys nested deep make them quadratic); what is built is counted, and the search refused once
    that passes `limits.max_bytes`."""

    def __init__(self, document: object, base: str, limits: SearchLimits) -> None:
        self.base = base
        self.links: list[tuple[int, str | int]] = []  # (its parent's link, or -1 for base; key or index)
        self.at: list[int] = []  # each value's link (-1: the document is the value)
        self.values: list[object] = []
        self.texts: list[str] = []
        size = 0
        stack: list[tuple[int, object]] = [(-1, document)]
        while stack:
            link, value = stack.pop()
            if isinstance(value, dict | list):
                size += _LINK * len(value)  # counted before its links are made
                _check(size, limits)
                keys: Iterable[str | int] = (
                    reversed(value) if isinstance(value, dict) else range(len(value) - 1, -1, -1)
                )
                for key in keys:
                    self.links.append((link, key))
                    stack.append((len(self.links) - 1, value[key]))  # type: ignore[index]
            else:
                text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
                size += len(text) + _SLOT
                _check(size, limits)
                self.at.append(link)
                self.values.append(value)
                self.texts.append(text)

    def __len__(self) -> int:
        return len(self.texts)

    def pointer(self, index: int, width: int, *, tail: bool = False) -> str:
        """Value `index`'s pointer as far as `width` characters show it: its start (a page's line, cut
        with "…"), or with `tail` its end (the words a search ranks it by)."""
        keys: list[str | int] = []
        link, spelled = self.at[index], 0
        while link >= 0 and not (tail and spelled > width):
            link, key = self.links[link]
            keys.append(key)
            spelled += len(str(key)) + 1
        if tail:
            return (self.base + "".join("/" + _segment(key) for key in reversed(keys)))[-width:]
        pointer = self.base
        for key in reversed(keys):
            pointer += "/" + _segment(key)
            if len(pointer) > width:
                break
        return _cut(pointer or "(the whole document)", width)


def _check(size: int, limits: SearchLimits) -> None:
    if size > limits.max_bytes:
        raise UsageError(
            f"the JSON original has more values than one search reads (over {limits.max_bytes:,} bytes of "
            "values and paths); search a part of it: a JSON pointer to the part (pointer), then grep or "
            "search there"
        )


def _segment(key: str | int) -> str:
    return str(key).replace("~", "~0").replace("/", "~1")


def _render_lines(
    lines: Sequence[str],
    found: Sequence[int],
    stopped: int | None,
    label: str,
    regexp: Any,
    context: int,
    skip: int,
    budget: int,
    *,
    ordered: bool,
) -> Found:
    """Matches from ``skip`` on, grep -n style (``N:`` a match, ``N-`` context, ``--`` between groups),
    as many as fit the budget. ``ordered`` matches are in line order and their groups merge."""
    total = len(found)
    header, room = _page_head(total, len(lines), "lines", label, stopped, skip, budget)
    body: list[str] = []
    used = 0
    shown: list[int] = []
    reach = context  # the context of the last match shown
    for index in found[skip:]:
        previous = (shown[-1], reach) if ordered and shown else None
        for reach in (context, 0) if not shown else (context,):
            piece = _group(lines, regexp, index, reach, previous, bool(shown))
            tail = _tail(lines, index, reach)
            if used + _size(piece) + _size(tail) <= room:
                break
        else:
            if shown:
                break
            reach, tail = 0, []  # the first match always shows, even cut short
            piece = [_line(lines, regexp, index, ":", min(_MATCH_LINE, room // 2))]
        if not ordered:  # each match is a group of its own: its context follows it
            piece += tail
        body.extend(piece)
        used += _size(piece)
        shown.append(index)
    if shown and ordered:
        body.extend(_tail(lines, shown[-1], reach))
    return _page(header, body, tuple(i + 1 for i in shown), total, skip, stopped, len(lines), "lines")


def _group(
    lines: Sequence[str],
    regexp: Any,
    index: int,
    reach: int,
    previous: tuple[int, int] | None,
    later: bool,
) -> list[str]:
    """The lines that show match ``index``: the rest of the ``previous`` match's context (with its
    reach) when matches are in line order, ``--`` when a gap comes first, the context before, the match.
    ``later`` when another match is shown before this one."""
    piece: list[str] = []
    start = max(0, index - reach)
    if previous is not None:
        before, before_reach = previous
        tail_end = min(before + before_reach, index - 1)
        piece.extend(_line(lines, None, i, "-", _CONTEXT_LINE) for i in range(before + 1, tail_end + 1))
        start = max(start, tail_end + 1)
        if start > tail_end + 1:
            piece.append("--")
    elif later:
        piece.append("--")
    piece.extend(_line(lines, None, i, "-", _CONTEXT_LINE) for i in range(start, index))
    piece.append(_line(lines, regexp, index, ":", _MATCH_LINE))
    return piece


def _tail(lines: Sequence[str], index: int, reach: int) -> list[str]:
    end = min(index + reach, len(lines) - 1)
    return [_line(lines, None, i, "-", _CONTEXT_LINE) for i in range(index + 1, end + 1)]


def _size(piece: Sequence[str]) -> int:
    return sum(len(line) + 1 for line in piece)


def _line(lines: Sequence[str], regexp: Any, index: int, mark: str, width: int) -> str:
    """``N:text`` or ``N-text``: one line without its line end, cut to ``width`` characters (around
    where ``regexp`` matches it, when given)."""
    text = lines[index].rstrip("\n").removesuffix("\r")
    return f"{index + 1}{mark}{_excerpt(text, regexp, width)}"


def _excerpt(text: str, regexp: Any, width: int) -> str:
    if len(text) <= width:
        return text
    at = 0
    if regexp is not None:
        data = text.encode("utf-8", "surrogatepass")
        match = regexp.search(data)
        if match is not None:
            first = match.start()
            while first and data[first] & 0xC0 == 0x80:  # inside a character (RE2's \C is one byte)
                first -= 1
            at = len(data[:first].decode("utf-8", "surrogatepass"))
    start = max(0, min(at - width // 3, len(text) - width))
    return f"{'…' if start else ''}{text[start : start + width]}{'…' if start + width < len(text) else ''}"


def _render_values(
    leaves: _Values,
    found: Sequence[int],
    stopped: int | None,
    label: str,
    regexp: Any,
    skip: int,
    budget: int,
) -> Found:
    """Matching JSON values from ``skip`` on, one ``pointer: value`` line each, as many as fit."""
    total = len(found)
    header, room = _page_head(total, len(leaves), "values", label, stopped, skip, budget)
    body: list[str] = []
    hits: list[int | str] = []
    used = 0
    for index in found[skip:]:
        text = leaves.texts[index]
        shown = _excerpt(text, regexp, _MATCH_LINE)
        if isinstance(leaves.values[index], str):
            shown = json.dumps(shown, ensure_ascii=False)
        pointer = leaves.pointer(index, _MATCH_LINE)
        line = f"{pointer}: {shown}"
        if body and used + len(line) + 1 > room:
            break
        body.append(line)
        hits.append(pointer)
        used += len(line) + 1
    return _page(header, body, tuple(hits), total, skip, stopped, len(leaves), "values")


def _page_head(
    total: int, out_of: int, what: str, label: str, stopped: int | None, skip: int, budget: int
) -> tuple[str, int]:
    """A page's header, and the room its body has; a UsageError for a ``skip`` past the last match."""
    if total and skip >= total:
        raise UsageError(f"skip {skip} is past the {total} match(es); give a skip from 0 to {total - 1}")
    if not total:
        hint = ""
        if label.startswith("grep") and not label.endswith("/i"):  # what else to try (the listing is short)
            hint = " (ignore_case: true ignores case; search takes words and ranks lines)"
        header = f"No {what[:-1]} of {out_of:,} matches {label}{hint}."
    else:
        count = f"{total:,}" if stopped is None else f"at least {total:,}"
        form = "N: a match, N- context" if what == "lines" else "pointer: value"
        header = f"{count} of {out_of:,} {what} match {label} ({form}):"
    return header, budget - len(header) - 1 - _FOOTER


def _page(
    header: str,
    body: list[str],
    hits: tuple[int | str, ...],
    total: int,
    skip: int,
    stopped: int | None,
    out_of: int,
    what: str,
) -> Found:
    """The page of ``hits`` shown in ``body``, under its header and over its footer (the next skip)."""
    next_skip = skip + len(hits) if skip + len(hits) < total else None
    parts = []
    if next_skip is not None:
        parts.append(f"{total - next_skip:,} more: the same call with skip={next_skip} shows the next")
    if stopped is not None:
        parts.append(
            f"search stopped by its time cap at {what[:-1]} {stopped + 1:,} of {out_of:,}, so there are at "
            "least these matches; narrow the pattern or search a part"
        )
    text = "\n".join([header, *body, *([f"[{'; '.join(parts)}]"] if parts else [])])
    return Found(text, hits, total, skip, next_skip, stopped is None)


def _label(pattern: str) -> str:
    return f"/{_cut(pattern, _LABEL)}/"


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"
