"""The outline engine's fast paths against the plain definitions they stand for: splitting lines,
finding query terms, ending a hunk, round-robin, and whole-text scans mapped back to lines."""

from __future__ import annotations

import math
import re

from hypothesis import given, settings
from hypothesis import strategies as st

from mcpsqueeze._lines import split_lines
from mcpsqueeze.shrink._formats import LANGUAGES
from mcpsqueeze.shrink._plans import _hunk_end, _round_robin, _Text
from mcpsqueeze.shrink._rank import _matches, rank_lines

SETTINGS = settings(max_examples=300, deadline=None)
# Line ends str.splitlines knows besides \n, the letters a case-insensitive pattern matches with ASCII
# ones, and a few others: where a fast path could go wrong.
_ODD = ["\r", "\r\n", "\x0b", "\x0c", "\x1c", "\x85", "\u2028", "\u0130", "\u0131", "\u017f", "\u212a"]
TEXT = st.lists(
    st.sampled_from(["a", "b", "A", "B", "s", "S", "k", "K", "i", "I", " ", "\n", "é", "ß", *_ODD])
)
TERMS = st.lists(st.text("abksiABKSI-é", min_size=1, max_size=3), min_size=1, max_size=3)


def _split_plainly(text: str) -> list[str]:
    parts = text.split("\n")
    return [part + "\n" for part in parts[:-1]] + ([parts[-1]] if parts[-1] else [])


@SETTINGS
@given(TEXT.map("".join))
def test_split_lines_ends_lines_at_newlines_only(text: str) -> None:
    assert split_lines(text) == _split_plainly(text)


@SETTINGS
@given(TEXT.map("".join), TERMS)
def test_query_terms_are_found_where_the_case_insensitive_alternation_finds_them(
    text: str, terms: list[str]
) -> None:
    ordered = sorted(terms, key=len, reverse=True)
    pattern = re.compile("|".join(map(re.escape, ordered)), re.IGNORECASE)
    expected = [(text.count("\n", 0, m.start()), m.group().lower()) for m in pattern.finditer(text)]
    assert _matches(text, terms) == expected


def _hunk_end_plainly(heads: bytes, a: int, old: int, new: int) -> int:
    i = a
    while (old > 0 or new > 0) and i < len(heads):
        head = heads[i : i + 1]
        if head == b"-":
            old -= 1
        elif head == b"+":
            new -= 1
        elif head != b"\\":
            old, new = old - 1, new - 1
        i += 1
    return i


@SETTINGS
@given(st.binary(max_size=60).map(lambda b: bytes(b"-+ \\x"[c % 5] for c in b)), st.data())
def test_a_hunk_ends_where_its_counts_run_out(heads: bytes, data: st.DataObject) -> None:
    a = data.draw(st.integers(0, len(heads)))
    old, new = data.draw(st.integers(0, 30)), data.draw(st.integers(0, 30))
    assert _hunk_end(heads, a, old, new) == _hunk_end_plainly(heads, a, old, new)


@SETTINGS
@given(st.lists(st.lists(st.integers(0, 999), max_size=12), max_size=8))
def test_round_robin_takes_the_kth_of_every_group_in_turn(groups: list[list[int]]) -> None:
    expected = [
        i for _, _, i in sorted((k, g, i) for g, group in enumerate(groups) for k, i in enumerate(group))
    ]
    assert _round_robin(groups) == expected


_CODE_LINES = [
    "def f(x):", "    async def g(", "class A(B):", "  fn main() {", "pub(crate) struct S", "impl X for Y {",
    "func (s *S) M() {", "type T struct {", "  public static int f(int x) {", "export const h = (a) => {",
    "  constructor(x) {", "  render() {", "x = 1", "", "  ", "\tdef t(self):", "é = 2", "\r",
]  # fmt: skip


@SETTINGS
@given(st.lists(st.sampled_from(_CODE_LINES), min_size=1, max_size=20), st.booleans())
def test_a_scan_of_the_whole_text_finds_the_lines_a_line_by_line_match_finds(
    rows: list[str], open_end: bool
) -> None:
    text = "\n".join(rows) + ("" if open_end else "\n")
    lines = split_lines(text)
    for language in LANGUAGES.values():
        expected = [k for k, line in enumerate(lines) if language.definition.match("\n" + line)]
        assert _Text(lines, text).matching(language.definition) == expected


def _rank_plainly(lines: list[str], terms: list[str], limit: int, text: str) -> list[int]:
    """BM25 over the matches of the case-insensitive alternation, each line a document (as it was)."""
    ordered = sorted(terms, key=len, reverse=True)
    pattern = re.compile("|".join(map(re.escape, ordered)), re.IGNORECASE)
    tf: dict[int, dict[str, int]] = {}
    for match in pattern.finditer(text):
        counts = tf.setdefault(text.count("\n", 0, match.start()), {})
        counts[match.group().lower()] = counts.get(match.group().lower(), 0) + 1
    df: dict[str, int] = {}
    for counts in tf.values():
        for term in counts:
            df[term] = df.get(term, 0) + 1
    n = len(lines)
    average = max(1.0, len(text) / n)
    idf = {term: math.log(1 + (n - d + 0.5) / (d + 0.5)) for term, d in df.items()}
    scores = []
    for index, counts in tf.items():
        norm = 1.2 * (1 - 0.75 + 0.75 * len(lines[index]) / average)
        scores.append((-sum(idf[t] * c * (1.2 + 1) / (c + norm) for t, c in counts.items()), index))
    scores.sort()
    return [index for _, index in scores[:limit]]


# Paths under a searched directory, as a listing returns them: the terms on nearly every line, overlapping
# (a longer term holds shorter ones), so that the dense path (one pass of the alternation) is taken.
_PATH_PIECES = ["/tmp", "/bench-cpu", "/repo", "/src", "/cpu", "/bench", "-cpu", "tmp", "Repo", "x", "/", " ", ".py",
                "\n", "\n", "\r\n", "é", "aa", "a", "\u212a"]  # fmt: skip
_PATH_TERMS = st.lists(st.sampled_from(["tmp", "bench-cpu", "bench", "cpu", "repo", "src", "aa", "a", "py"]),
                       min_size=1, max_size=6, unique=True)  # fmt: skip


@settings(max_examples=600, deadline=None)
@given(
    st.lists(st.sampled_from(_PATH_PIECES), min_size=1, max_size=300).map("".join),
    _PATH_TERMS,
    st.integers(1, 50),
)
def test_ranked_lines_are_what_bm25_over_the_alternation_ranks(
    text: str, terms: list[str], limit: int
) -> None:
    lines = split_lines(text)
    assert rank_lines(lines, terms, limit, text) == _rank_plainly(lines, terms, limit, text)
