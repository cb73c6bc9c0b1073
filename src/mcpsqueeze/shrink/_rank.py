"""Query-aware ranking: the lines that match a call's own string arguments are kept first.

A search for ``parse_line`` whose result must be cut should still show the lines about
``parse_line``. Terms come from the call's string arguments (query, pattern, path, ...); each line is
a document scored by BM25. Pure and deterministic: ties keep document order.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from itertools import compress
from typing import AnyStr

__all__ = ["query_terms", "rank_lines", "search_terms"]

_TERM_RE = re.compile(r"[^\W_][\w-]*[^\W_]|[^\W_]", re.UNICODE)
_MIN_TERM = 3
_MAX_TERMS = 24
_MAX_ARG_CHARS = 500  # longer strings are content (a file to write), not a query
_K1 = 1.2
_B = 0.75


#: Arguments that name where to work (a repository, a root directory), not what to look for: their
#: words are in every path of a diff or listing and would only crowd out the real matches. And those
#: that name what to leave out (``excludePatterns``, ``ignore``): the opposite of what to look for.
_PLACE_RE = re.compile(r"repo|root|cwd|workdir|workspace|base_?dir|directory|exclude|ignore", re.IGNORECASE)


def _strings(value: object, depth: int = 0) -> Iterable[str]:
    if isinstance(value, str):
        yield value
    elif depth < 3 and isinstance(value, Mapping):
        for key, item in value.items():
            if not (isinstance(key, str) and _PLACE_RE.search(key)):
                yield from _strings(item, depth + 1)
    elif depth < 3 and isinstance(value, list | tuple):
        for item in value:
            yield from _strings(item, depth + 1)


def query_terms(arguments: Mapping[str, object] | None) -> tuple[str, ...]:
    """The search terms in a call's arguments: words of 3+ characters from its short strings,
    lower-cased, first occurrence first (so the order, and the ranking, is deterministic). Arguments
    named for a place to work in (``repo_path``, ``root``, ``directory``) or for what to leave out
    (``excludePatterns``) are left out."""
    if not arguments:
        return ()
    seen: dict[str, None] = {}
    for text in _strings(arguments):
        if len(text) <= _MAX_ARG_CHARS:
            _add_words(seen, text, _MIN_TERM, numbers=False)
    return tuple(seen)[:_MAX_TERMS]


def search_terms(query: str) -> tuple[str, ...]:
    """The terms of a search an agent asked for (recover's ``search``): as `query_terms` finds them, but
    the words are what it typed, so 2-letter words and numbers count too (``io``, ``404``)."""
    seen: dict[str, None] = {}
    _add_words(seen, query, 2, numbers=True)
    return tuple(seen)[:_MAX_TERMS]


def _add_words(seen: dict[str, None], text: str, shortest: int, *, numbers: bool) -> None:
    """Add the lower-cased words of ``text`` (``shortest`` characters or more) to ``seen``, in order."""
    for word in _TERM_RE.findall(text):
        word = word.lower()
        if len(word) >= shortest and (numbers or not word.isdigit()):
            seen.setdefault(word, None)
            for part in word.split("-"):  # "read-text" also finds "read" and "text"
                if len(part) >= shortest and part != word and (numbers or not part.isdigit()):
                    seen.setdefault(part, None)


def rank_lines(
    lines: Sequence[str],
    terms: Sequence[str],
    limit: int = 40,
    text: str | None = None,
    share: float = 1.0,
) -> list[int]:
    """Indexes of the lines that contain a term, best BM25 score first (at most ``limit``).

    A term is matched case-insensitively anywhere in a line, so ``stages`` finds ``ShrinkStage``.
    ``text`` is the lines joined, when the caller has it. A term found on more than ``share`` of the
    lines is left out: it tells no line from another (the words of a path the call read, say)."""
    if not terms or not lines:
        return []
    if text is None:
        text = "".join(lines)
    n = len(lines)
    most = int(share * n)
    found = _matches(text, terms, dense=True)
    if isinstance(found, _Dense):
        keys = found.keys
    else:  # (few matches: each line's key made from its own, each word led by a blank)
        keys = [b""] * n
        for index, word in found:
            keys[index] += b" " + word.encode("utf-8", "surrogatepass")
    # A line's score depends only on its length and its matches in order, so lines alike in both (every
    # path of a listing under the searched directory) are scored once, and the document frequencies are
    # counted once per such kind of line.
    matched = list(compress(range(len(keys)), keys))
    if not matched:
        return []
    df: dict[bytes, int] = {}
    for key, lines_alike in Counter(map(keys.__getitem__, matched)).items():
        for term in dict.fromkeys(key.split()):
            df[term] = df.get(term, 0) + lines_alike
    common = {term for term, d in df.items() if d > most}
    if common:
        keys = [b" ".join(t for t in key.split() if t not in common) for key in keys]
        df = {term: d for term, d in df.items() if term not in common}
        matched = list(compress(range(len(keys)), keys))
        if not matched:
            return []
    average = max(1.0, len(text) / n)
    idf = {term: math.log(1 + (n - d + 0.5) / (d + 0.5)) for term, d in df.items()}
    kinds = list(zip(map(keys.__getitem__, matched), map(len, map(lines.__getitem__, matched)), strict=True))
    known: dict[tuple[bytes, int], float] = {}
    for kind in dict.fromkeys(kinds):
        key, length = kind
        counts: dict[bytes, int] = {}
        for term in key.split():
            counts[term] = counts.get(term, 0) + 1
        norm = _K1 * (1 - _B + _B * length / average)
        known[kind] = -sum(idf[t] * c * (_K1 + 1) / (c + norm) for t, c in counts.items())
    scores = list(zip(map(known.__getitem__, kinds), matched, strict=True))
    scores.sort()
    return [index for _, index in scores[:limit]]


class _Dense:
    """Many matches: per line of the text, what ``_matches`` finds on it, as ``b"term term ..."``
    (lower-cased, in order; ``b""`` for none), found by one C pass of the alternation and the newline."""

    __slots__ = ("keys",)

    def __init__(self, data: bytes, ordered: Sequence[bytes]) -> None:
        pattern = re.compile(b"|".join(map(re.escape, ordered)) + b"|\n")
        self.keys = list(map(bytes.strip, b" ".join(pattern.findall(data)).split(b"\n")))


#: The non-ASCII letters that a case-insensitive pattern matches with ASCII ones, and the ASCII
#: letter each matches (the Kelvin sign lower-cases to k by itself).
_ODD_CASES = {"\u0130": "i", "\u0131": "i", "\u017f": "s", "\u212a": "k"}


def _matches(text: str, terms: Sequence[str], dense: bool = False) -> list[tuple[int, str]] | _Dense:
    """(line index, the match lower-cased) of each match of ``terms`` in ``text``: what ``finditer``
    of their case-insensitive alternation, longest first, finds. For ASCII terms that is found with
    ``find`` (the alternation tries every position of the text in Python's regex engine, slowly):
    in the text's UTF-8 with ASCII letters lower-cased (no other character's bytes can match an
    ASCII term), or, when the text has one of the odd cases, in the text with every character folded
    to what such a pattern matches it with.

    With ``dense``, ASCII terms without blanks that occur more than once per 64 bytes (the listing of a
    directory the call named: every line holds its path) are found by the alternation on the lower-cased
    bytes after all, in C, and the answer is those matches line by line (``_Dense``): past that, the
    finds' Python loop costs more than the pattern's scan."""
    ordered = sorted(terms, key=len, reverse=True)
    if all(term and term.isascii() for term in ordered):
        lowered = [term.lower() for term in ordered]
        if text.isascii() or not any(letter in text for letter in _ODD_CASES):
            data = text.encode("utf-8", "surrogatepass").lower()
            encoded = [term.encode() for term in lowered]
            most = len(data) >> 6 if dense and all(term.split() == [term] for term in encoded) else None
            found = _first_matches(data, encoded, most)
            if found is None:
                return _Dense(data, encoded)
            return [(line, lowered[rank]) for line, (_, rank) in zip(_lines(data, found), found, strict=True)]
        folded = text.replace("\u0130", "i").lower().replace("\u0131", "i").replace("\u017f", "s")
        if len(folded) == len(text):  # each character folded in its place
            found = _first_matches(folded, lowered)
            assert found is not None
            return [  # the match as it is in the text, lower-cased (a long s stays one)
                (line, text[at : at + len(lowered[rank])].lower())
                for line, (at, rank) in zip(_lines(folded, found), found, strict=True)
            ]
    pattern = re.compile("|".join(map(re.escape, ordered)), re.IGNORECASE)
    spans = [(match.start(), match.group().lower()) for match in pattern.finditer(text)]
    return [(line, term) for line, (_, term) in zip(_lines(text, spans), spans, strict=True)]


def _first_matches(
    text: AnyStr, ordered: Sequence[AnyStr], most: int | None = None
) -> list[tuple[int, int]] | None:
    """(where, which) of the matches an alternation of the literal ``ordered`` finds, left to right:
    at each place the first of them that occurs there, and the next match starts after it. None once
    more than ``most`` occurrences are found."""
    found: list[tuple[int, int]] = []
    left = len(text) * len(ordered) if most is None else most  # (as many as there can be: no limit)
    for rank, term in enumerate(ordered):
        at = text.find(term)
        while at >= 0:
            found.append((at, rank))
            left -= 1
            if left < 0:
                return None
            at = text.find(term, at + 1)
    found.sort()
    matches: list[tuple[int, int]] = []
    end = 0
    for at, rank in found:
        if at >= end:
            matches.append((at, rank))
            end = at + len(ordered[rank])
    return matches


def _lines(text: AnyStr, found: Sequence[tuple[int, object]]) -> list[int]:
    """The line of each place in ``found`` (in order): the newlines before it, counted in C."""
    newline = "\n" if isinstance(text, str) else b"\n"
    lines: list[int] = []
    index = at = 0
    for where, _ in found:
        index += text.count(newline, at, where)
        at = where
        lines.append(index)
    return lines
