"""What stands out from its siblings: the units of a result worth showing before its samples.

A result with many siblings (table rows, array items, log lines, sentences) is mostly alike; what an
agent needs from it is often the one that is not: a row whose note no other row has, a category seen
once, a number far out of its column's range, a record with a key no other record has, a line or a
sentence made of words the others do not use. Each unit gets a score; units whose score stands clear
of their siblings' usual one are returned, best first.

- **Rare words.** Words of three letters or more (lower-cased; digits and underscores split words, so
  ids and counters do not count), each counted once per unit. A word no other unit uses counts 1, one
  that one other unit uses counts 1/2. A unit's score is what its words count, less what its siblings'
  usually count (the median), so where every line holds a word of its own (an id, a name), only the
  ones with several stand out.
- **Columns** (the fields of records, the cells of rows): a value seen once in a column of few values
  (a category), a number far out of the column's usual range (many median deviations away), a field no
  other record has; free text in a column is scored by its rare words.

Deterministic and linear: one pass to count (``Counter``, set intersections: C), one to score. And
bounded where a preview's time per MB must stay what it was: a JSON array's first ``MAX_ITEMS`` items
are compared (the packing itself looks at only a few hundred of a long array), and a column's free
text only up to ``_TEXT_CHARS`` (every word of it is an object to count).
"""

from __future__ import annotations

import math
import re
from bisect import bisect_left, bisect_right
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from itertools import accumulate, chain, compress, count, repeat, zip_longest
from operator import itemgetter, methodcaller, not_

from mcpsqueeze._jsonbytes import dumps_text
from mcpsqueeze.shrink._rank import rank_lines

__all__ = [
    "MATCHES",
    "MISSING",
    "SELECTIVE",
    "rare_word_scores",
    "standouts",
    "unusual_items",
    "unusual_records",
]

#: How many units that stand out a preview shows beside its landmarks, at most.
_UNUSUAL = 5
#: JSON arrays of this many items keep the ones the call's words match or that stand out.
PIN_FROM = 20
#: How many units the call's own words match come first (rows, lines, sentences, items), at most ...
MATCHES = 8
#: ... counting only words found in at most this share of the units: a word in more of them (the
#: words of a path the call read, say) tells none of them apart.
SELECTIVE = 0.25

_STANDOUT = 2.0  # a unit stands out with this much more than its siblings' usual score
_STRONG = 3.0  # what a value seen once, a number far out or a field of its own adds
_FAR = 8.0  # a number this many median absolute deviations from its column's median is far out
_FEW_VALUES = 0.1  # a column with at most this share of distinct values (or 12) is a category ...
_MAX_CATEGORIES = 200  # ... and never with more distinct values than this
_MIN_SIBLINGS = 8
_WORDS_CHARS = 4 * 1024 * 1024  # the texts compared for rare words (each word is an object to count)
_KEPT_SETS = 20_000  # units whose word sets are held at once; more are counted in two passes
_TEXT_CHARS = 32 * 1024  # a column of free text longer than this is not searched for rare words ...
_PROSE_CHARS = 48  # ... nor one whose values are shorter than this on average
MAX_ITEMS = 1000  # ... and an array's items after these are not compared (a preview shows few of them)


MISSING = object()  # the value of a field a record has not got
_MISSING = type(MISSING)
_NUMBERS = frozenset((int, float))
_NESTED = frozenset((dict, list))


def rare_word_scores(texts: Sequence[str]) -> list[float]:
    """Each text's rare words, counted as the module says, less the median of the texts' counts
    (never below 0). Only the texts in the first ``_WORDS_CHARS`` characters are compared (a log of
    50 MB keeps its time and memory per MB); the others score 0. Texts whose words are the same (a
    text that occurs again, log lines that differ only in their numbers) are read once and counted as
    often as they occur."""
    n = len(texts)
    if n < _MIN_SIBLINGS:
        return [0.0] * n
    m = n
    if sum(map(len, texts)) > _WORDS_CHARS:
        m = bisect_right(list(accumulate(map(len, texts))), _WORDS_CHARS)
        if m < _MIN_SIBLINGS:
            return [0.0] * n
    compared = texts[:m] if m < n else texts
    times = Counter(compared)
    keys = _word_keys(list(times))  # (one for each distinct text, in the order first seen)
    if len(times) == m:
        weights = Counter(keys)
    else:
        weights = Counter()
        for key, occurrences in zip(keys, times.values(), strict=True):
            weights[key] += occurrences
    if len(weights) <= _KEPT_SETS:
        words: Iterable[set[bytes]] = list(map(set, map(bytes.split, weights)))
        df = Counter(chain.from_iterable(words))
    else:  # (many units: their word sets are made twice rather than all held at once)
        df = Counter(chain.from_iterable(map(set, map(bytes.split, weights))))
        words = map(set, map(bytes.split, weights))
    if len(weights) < m:
        for key, occurrences in weights.items():
            if occurrences > 1:  # (its words counted for each occurrence)
                for word in set(key.split()):
                    df[word] += occurrences - 1
    once = {w for w, c in df.items() if c == 1 and _long_word(w)}
    twice = {w for w, c in df.items() if c == 2 and _long_word(w)}
    if twice:
        raw = [len(once.intersection(w)) + 0.5 * len(twice.intersection(w)) for w in words]
    else:
        raw = list(map(float, map(len, map(once.intersection, words))))
    usual = _weighted_median(raw, weights.values(), m)
    scored = [r - usual if r > usual else 0.0 for r in raw]
    if len(weights) < m:
        scored = list(map(dict(zip(weights, scored, strict=True)).__getitem__, keys))
    if len(times) < m:
        scored = list(map(dict(zip(times, scored, strict=True)).__getitem__, compared))
    return scored + [0.0] * (n - m)


def _weighted_median(values: list[float], times: Iterable[int], m: int) -> float:
    """``sorted(...)[m // 2]`` of the ``m`` values that ``values`` stand for, each ``times`` over."""
    if len(values) == m:
        return sorted(values)[m // 2]
    seen = 0
    for value, occurrences in sorted(zip(values, times, strict=True)):
        seen += occurrences
        if seen > m // 2:
            return value
    raise ValueError("fewer values than counted")


# Words, in C: the texts joined by line ends, as UTF-8, upper-case ASCII letters lowered and every other
# byte that is not a letter made a blank by one table, after the few distinct characters that are not
# ASCII were lowered or made blanks one by one (the regular expression's letters, as ``str.lower``).
_LETTERS = bytes(c if chr(c).isalpha() or c >= 0x80 or c == 0x0A else 0x20 for c in range(256)).translate(
    bytes.maketrans(b"ABCDEFGHIJKLMNOPQRSTUVWXYZ", b"abcdefghijklmnopqrstuvwxyz")
)
_ASCII = bytes(range(0x80))
_LETTER_RE = re.compile(r"[^\W\d_]")
_REPLACED = 64  # more distinct characters to replace than this: the text is lowered and read at once


def _word_keys(texts: Sequence[str]) -> list[bytes]:
    """Each text as its words see it: UTF-8 with its letters lowered and all else blanks, so that
    ``key.split()`` are its words (runs of letters, of any length: ``_long_word`` tells the words of
    3 letters or more). Texts of ASCII are read together in one table's pass; the others (often a
    few) together by the characters they hold."""
    joined = _joined(texts)
    if joined.isascii():
        return _ascii_keys(joined)
    odd = list(compress(count(), map(not_, map(str.isascii, texts))))
    if len(odd) == len(texts):
        return _other_keys(joined)
    plain = list(texts)
    for i in odd:
        plain[i] = ""
    found = _ascii_keys(_joined(plain))
    for i, key in zip(odd, _other_keys(_joined([texts[i] for i in odd])), strict=True):
        found[i] = key
    return found


def _joined(texts: Sequence[str]) -> str:
    """The texts joined by line ends, one between each two: line ends inside them made blanks (lines
    that each end in one, the last perhaps not, are joined as they are)."""
    if not texts[0].endswith("\n"):
        joined = "\n".join(texts)
        if joined.count("\n") == len(texts) - 1:
            return joined
    ended = sum(map(str.endswith, texts, repeat("\n")))
    if ended == len(texts) - 1 + texts[-1].endswith("\n"):
        joined = "".join(texts)
        if joined.count("\n") == ended:
            return joined[:-1] if ended == len(texts) else joined
    return "\n".join(text.replace("\n", " ") for text in texts)


def _ascii_keys(joined: str) -> list[bytes]:
    return joined.encode("ascii").translate(_LETTERS).split(b"\n")


def _other_keys(joined: str) -> list[bytes]:
    source = joined
    if "\u03a3" in joined:  # (a capital sigma lowers by what follows it: the whole text is lowered)
        source = joined.lower()
    data = source.encode("utf-8", "surrogatepass")
    others = set(data.translate(None, _ASCII).decode("utf-8", "surrogatepass"))
    # each character as the words see it: lower-cased, what is not a letter a blank
    lowered = {char: "".join(c if _LETTER_RE.match(c) else " " for c in char.lower()) for char in others}
    changes = {char: to for char, to in lowered.items() if to != char}
    if len(changes) > _REPLACED:
        table = {ord(char): to for char, to in changes.items()}
        data = source.translate(table).encode("utf-8", "surrogatepass")
    else:
        for char, to in changes.items():
            data = data.replace(char.encode("utf-8", "surrogatepass"), to.encode("utf-8", "surrogatepass"))
    return data.translate(_LETTERS).split(b"\n")


def _long_word(word: bytes) -> bool:
    return len(word) >= 3 and (word.isascii() or len(word.decode("utf-8", "surrogatepass")) >= 3)


def standouts(scores: Sequence[float] | dict[int, float]) -> list[int]:
    """The indexes of the ``_UNUSUAL`` best scores that stand out (``_STANDOUT`` or more), best first;
    ties keep document order. ``scores`` may be a dict of the indexes that scored at all."""
    if isinstance(scores, dict):
        best = sorted((-s, i) for i, s in scores.items() if s >= _STANDOUT)
    elif not scores or max(scores) < _STANDOUT:
        return []
    else:  # (the few that stand out found in C)
        best = sorted((-scores[i], i) for i in compress(count(), map(_STANDOUT.__le__, scores)))
    return [i for _, i in best[:_UNUSUAL]]


def _few(count: int, n: int) -> bool:
    """Few enough to stand out: at least one, at most 2 of ``n`` values and at most 1 in 100."""
    return 0 < count <= max(2, n // 100)


def _far_out(column: Sequence[object], numbers: list[float]) -> list[int] | None:
    """The indexes of the values far out of the column's usual range (``numbers`` are its values
    present, as numbers); None when there are none or many (a long-tailed column: its far values are
    its usual ones)."""
    present = sorted(numbers)
    n = len(present)
    median = present[n // 2]
    reach = _FAR * 1.4826 * _median_deviation(present)
    low, high = median - reach, median + reach
    below, above = bisect_left(present, low), bisect_right(present, high)
    if not _few(below + n - above, n):
        return None
    values = {*present[:below], *present[above:]}
    if len(numbers) == len(column):  # (every value a number, in the column's order: found in C)
        return list(compress(count(), map(values.__contains__, numbers)))
    return [i for i, v in enumerate(column) if v is not MISSING and _number(v) in values]


def _median_deviation(present: list[float]) -> float:
    """The ``n // 2``-th smallest of the values' distances from their median (``present`` sorted), as
    ``sorted(abs(v - median) for v in present)[n // 2]`` finds it, by bisection: the distances below
    the median, read down from it, and those above it, read up, are two sorted runs."""
    n = len(present)
    mid = n // 2
    median = present[mid]

    def below(j: int) -> float:  # the j-th distance of the run that reads down from the median
        return median - present[mid - j]

    def above(j: int) -> float:  # the j-th distance of the run above it
        return present[mid + 1 + j] - median

    size_below, size_above = mid + 1, n - mid - 1
    want = mid + 1  # how many distances are taken, from the two runs together
    low, high = max(0, want - size_above), min(want, size_below)
    while low < high:  # the fewest taken from the run below such that the rest fit the run above
        taken = (low + high) // 2
        if below(taken) < above(want - taken - 1):
            low = taken + 1
        else:
            high = taken
    taken = low
    last = [below(taken - 1)] if taken else []
    if want - taken:
        last.append(above(want - taken - 1))
    return max(last)


def _number(value: object) -> float | None:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            return None
    return None


def _as_numbers(column: Sequence[object], types: set[type]) -> list[float] | None:
    """The column's values present as numbers, or None when it is not a column of numbers (of
    JSON numbers, or of strings that all read as finite numbers, empty ones left out)."""
    if types <= _NUMBERS:
        numbers = list(map(float, column))  # type: ignore[arg-type]
    elif types <= _NUMBERS | {_MISSING, type(None)}:
        numbers = [float(v) for v in column if type(v) in _NUMBERS]  # type: ignore[arg-type]
    elif types <= {str, _MISSING}:
        present = column if _MISSING not in types else [v for v in column if v is not MISSING]
        try:
            numbers = list(map(float, filter(None, present)))  # type: ignore[arg-type]
        except ValueError:
            return None
    else:
        return None
    if len(numbers) < _MIN_SIBLINGS or not all(map(math.isfinite, numbers)):
        return None
    return numbers


def _column_scores(column: Sequence[object], types: set[type]) -> dict[int, float] | None:
    """What the values of one column (of ``types``) add to their records' scores (only those that
    add); None when the column says nothing."""
    if types & _NESTED:
        return None
    n = len(column)
    numbers = _as_numbers(column, types)
    if numbers is not None:
        far = _far_out(column, numbers)
        return None if far is None else dict.fromkeys(far, _STRONG)
    categories = min(_MAX_CATEGORIES, max(12, int(n * _FEW_VALUES)))
    # (more values than a category has among its first few is enough to tell it is none)
    if len(set(column[: 4 * categories])) <= categories and len(seen := Counter(column)) <= categories:
        once = [k for k, c in seen.items() if c == 1 and k is not MISSING]
        if not _few(len(once), n):
            return None
        if len(once) <= 2:  # (a few found each by its own scan)
            return dict.fromkeys(sorted(map(column.index, once)), _STRONG)
        return dict.fromkeys(compress(count(), map(set(once).__contains__, column)), _STRONG)
    if n * _PROSE_CHARS > _TEXT_CHARS:
        return None  # (too long or too short on average: see below)
    texts: Sequence[str] = column if types == {str} else [v if type(v) is str else "" for v in column]  # type: ignore[assignment]
    if sum(map(str.__contains__, texts, repeat(" "))) * 2 < n:
        return None  # ids, names, dates: every value its own, none telling
    size = sum(map(len, texts))
    if size > _TEXT_CHARS or size < _PROSE_CHARS * n:
        # (every word is an object to count: bounded, so that a big result's preview stays quick; and only
        # where values are sentences, notes or snippets: short ones, titles and labels, tell little
        # by their words, and what is odd among them is a value seen once)
        return None
    return {i: s for i, s in enumerate(rare_word_scores(texts)) if s}


def unusual_records(
    columns: Sequence[Sequence[object]], n: int, present: Sequence[int] | None = None, *, cells: bool = False
) -> dict[int, float]:
    """The scores of the records that score at all, from their fields (``columns``: one list of
    ``n`` values per field, ``MISSING`` where a record has not got it; ``present``: how many records
    have each field, when the caller knows). A field that only a few records have (at most 2, and at
    most 1 in 100) gives each of them ``_STRONG``. ``cells``: a table's, every value a string."""
    scores: dict[int, float] = {}
    if n < _MIN_SIBLINGS:
        return scores
    if present is None:
        present = [n] * len(columns) if cells else [n - column.count(MISSING) for column in columns]
    for column, have in zip(columns, present, strict=True):
        if _few(have, n):
            # (a field of containers few records have is structure, a directory among files: not counted)
            added: dict[int, float] | None = dict.fromkeys(
                (i for i, v in enumerate(column) if v is not MISSING and type(v) not in _NESTED), _STRONG
            )
        else:
            added = _column_scores(column, {str} if cells else set(map(type, column)))
        for i, score in (added or {}).items():
            scores[i] = scores.get(i, 0.0) + score
    return scores


def unusual_items(items: Sequence[object], terms: Sequence[str] = ()) -> list[int]:
    """The items of a JSON array worth keeping whole, best first: those whose strings the call's own
    words (``terms``) match best (at most ``MATCHES``) and those that stand out from the others
    (records, objects, by their fields as ``unusual_records`` scores them; strings by their rare
    words), the best of each first."""
    items = items[:MAX_ITEMS]
    n = len(items)
    if n < _MIN_SIBLINGS:
        return []
    kinds = Counter(map(type, items))
    found: list[int] = []
    if kinds[dict] * 2 >= n:
        records: Sequence[dict[str, object]] = (
            items if kinds[dict] == n else [item if isinstance(item, dict) else {} for item in items]  # type: ignore[assignment]
        )
        names: Counter[str] = Counter(chain.from_iterable(records))
        # each field read in C: by ``itemgetter`` when every record has it, else by ``get`` (``MISSING``)
        columns = [
            list(map(itemgetter(name) if count == n else methodcaller("get", name, MISSING), records))
            for name, count in names.items()
        ]
        found = standouts(unusual_records(columns, n, list(names.values())))
        if terms:
            texts = [" ".join(v for v in row if type(v) is str) for row in zip(*columns, strict=True)]
            found = _alternate(_matching(texts, terms), found)
    elif kinds[str] * 2 >= n:
        texts = [item if isinstance(item, str) else "" for item in items]
        found = _alternate(_matching(texts, terms), standouts(rare_word_scores(texts)))
    return found


def _alternate(first: list[int], second: list[int]) -> list[int]:
    """The best of each, then the second best of each, ... (each index once)."""
    merged = chain.from_iterable(zip_longest(first, second))
    return list(dict.fromkeys(i for i in merged if i is not None))


_PART_RE = re.compile(r"[^\W_]+")


def _matching(texts: list[str], terms: Sequence[str]) -> list[int]:
    """The texts the call's own words match best (``rank_lines``), at most ``MATCHES``: an item's
    values are names and notes, so only a term that is a whole word of some text counts (``repo``
    does not find ``report``)."""
    if not terms:
        return []
    words = set(_PART_RE.findall("\n".join(texts).lower()))
    whole = [term for term in terms if term in words]
    if not whole:
        return []
    lines = [text.replace("\n", " ") + "\n" for text in texts]
    return rank_lines(lines, whole, limit=MATCHES, share=SELECTIVE)


def _arrays(root: object) -> Iterator[list[object]]:
    """The arrays of a JSON document: through objects, and the first ``MAX_ITEMS`` items of arrays."""
    stack = [root]
    while stack:
        node = stack.pop()
        if type(node) is dict:
            stack.extend([v for v in node.values() if type(v) is dict or type(v) is list])
        elif type(node) is list:
            yield node
            stack.extend([v for v in node[:MAX_ITEMS] if type(v) is dict or type(v) is list])


def pins(root: object, terms: Sequence[str] = ()) -> dict[int, list[int]]:
    """``unusual_items`` of each array of ``PIN_FROM`` items or more in a JSON document, by the
    array's ``id`` (inside a long array, only its first ``MAX_ITEMS`` items are looked into)."""
    return {id(node): unusual_items(node, terms) for node in _arrays(root) if len(node) >= PIN_FROM}


def pinned_chars(root: object, found: dict[int, list[int]], most: int) -> int:
    """The room the items ``pins`` found take in compact JSON, each at most ``most`` characters."""
    if not any(found.values()):
        return 0
    return sum(
        min(len(dumps_text(node[i])), most) + 1 for node in _arrays(root) for i in found.get(id(node), ())
    )
