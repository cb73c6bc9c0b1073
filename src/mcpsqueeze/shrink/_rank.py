"""Query-aware ranking: the lines that match a call's own string arguments are kept first.

A search for ``parse_line`` whose result must be cut should still show the lines about
``parse_line``. Terms come from the call's string arguments (query, pattern, path, ...); each line is
a document scored by BM25. Pure and deterministic: ties keep document order.
"""

from __future__ import annotations

import math
import re
from bisect import bisect_right
from collections.abc import Iterable, Mapping, Sequence

__all__ = ["query_terms", "rank_lines"]

_TERM_RE = re.compile(r"[^\W_][\w-]*[^\W_]|[^\W_]", re.UNICODE)
_MIN_TERM = 3
_MAX_TERMS = 24
_MAX_ARG_CHARS = 500  # longer strings are content (a file to write), not a query
_K1 = 1.2
_B = 0.75


#: Arguments that name where to work (a repository, a root directory), not what to look for: their
#: words are in every path of a diff or listing and would only crowd out the real matches.
_PLACE_RE = re.compile(r"repo|root|cwd|workdir|workspace|base_?dir|directory", re.IGNORECASE)


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
    named for a place to work in (``repo_path``, ``root``, ``directory``) are left out."""
    if not arguments:
        return ()
    seen: dict[str, None] = {}
    for text in _strings(arguments):
        if len(text) > _MAX_ARG_CHARS:
            continue
        for word in _TERM_RE.findall(text):
            word = word.lower()
            if len(word) >= _MIN_TERM and not word.isdigit():
                seen.setdefault(word, None)
                for part in word.split("-"):  # "read-text" also finds "read" and "text"
                    if len(part) >= _MIN_TERM and part != word:
                        seen.setdefault(part, None)
    return tuple(seen)[:_MAX_TERMS]


def rank_lines(lines: Sequence[str], terms: Sequence[str], limit: int = 40) -> list[int]:
    """Indexes of the lines that contain a term, best BM25 score first (at most ``limit``).

    A term is matched case-insensitively anywhere in a line, so ``stages`` finds ``ShrinkStage``."""
    if not terms or not lines:
        return []
    pattern = re.compile("|".join(re.escape(t) for t in sorted(terms, key=len, reverse=True)), re.IGNORECASE)
    text = "".join(lines)
    starts: list[int] = []
    position = 0
    for line in lines:
        starts.append(position)
        position += len(line)
    tf: dict[int, dict[str, int]] = {}
    for match in pattern.finditer(text):
        index = bisect_right(starts, match.start()) - 1
        counts = tf.setdefault(index, {})
        term = match.group().lower()
        counts[term] = counts.get(term, 0) + 1
    if not tf:
        return []
    df: dict[str, int] = {}
    for counts in tf.values():
        for term in counts:
            df[term] = df.get(term, 0) + 1
    n = len(lines)
    average = max(1.0, len(text) / n)
    idf = {term: math.log(1 + (n - d + 0.5) / (d + 0.5)) for term, d in df.items()}
    scores: list[tuple[float, int]] = []
    for index, counts in tf.items():
        norm = _K1 * (1 - _B + _B * len(lines[index]) / average)
        score = sum(idf[t] * c * (_K1 + 1) / (c + norm) for t, c in counts.items())
        scores.append((-score, index))
    scores.sort()
    return [index for _, index in scores[:limit]]
