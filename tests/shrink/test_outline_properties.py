"""Properties of outline previews over generated code, diffs, tables, logs, Markdown and any lines:
the budget is never exceeded, shown lines and folded ranges rebuild the original exactly, and every
count a marker states is the count of the lines it folds."""

from __future__ import annotations

import re

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from outlines import folds, rebuild

from mcpsqueeze._errors import ShrinkError
from mcpsqueeze._lines import line_span, split_lines
from mcpsqueeze._voice import McpVoice, ShellVoice
from mcpsqueeze.shrink import RecoveryHint, shrink_texts

HINTS = st.sampled_from(
    [
        RecoveryHint("a" * 32, "/tmp/recovery/mcpsqueeze-" + "a" * 32 + ".json", McpVoice()),
        RecoveryHint("c" * 32, None, ShellVoice()),
    ]
)
BUDGETS = st.sampled_from([1024, 1500, 4000, 20000])
SETTINGS = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
_VOCABULARY = ["alpha", "Beta", "gamma_2", "x", "load", "parse", "f00", "_private", "Zeta", "omega"]
NAME = st.lists(st.sampled_from(_VOCABULARY), min_size=1, max_size=3).map("_".join)
WORDS = st.lists(st.sampled_from(_VOCABULARY), min_size=1, max_size=8).map(" ".join)
ANY_LINE = st.text(st.characters(codec="utf-8", exclude_characters="\n"), max_size=80)


@st.composite
def python_source(draw: st.DrawFn) -> str:
    out = [f'"""{draw(WORDS)}"""\n', "\n", "import os\n", "from typing import Any\n", "\n"]
    for _ in range(draw(st.integers(8, 30))):
        indent = "    " * draw(st.integers(0, 2))
        keyword = draw(st.sampled_from(["def", "async def", "class"]))
        out.append(f"{indent}{keyword} {draw(NAME)}(self, x: Any) -> None:\n" if keyword != "class" else "")
        if keyword == "class":
            out.append(f"{indent}class {draw(NAME)}(object):\n")
        body = draw(st.lists(ANY_LINE, min_size=1, max_size=8))
        out.extend(f"{indent}    x = {line}\n" for line in body)
        out.append(draw(st.sampled_from(["\n", ""])))
    return "".join(out) + draw(st.sampled_from(["", "tail_without_newline = 1"]))


@st.composite
def unified_diff(draw: st.DrawFn) -> str:
    out = [draw(st.sampled_from(["", "Diff with HEAD~3:\n"]))]
    for _ in range(draw(st.integers(1, 12))):
        path = draw(NAME)
        out.append(f"diff --git a/{path}.py b/{path}.py\nindex 1234567..89abcde 100644\n")
        out.append(f"--- a/{path}.py\n+++ b/{path}.py\n")
        start = 1
        for _ in range(draw(st.integers(1, 6))):
            body = draw(st.lists(st.sampled_from(" +-"), min_size=1, max_size=40))
            old = sum(c != "+" for c in body)
            new = sum(c != "-" for c in body)
            out.append(f"@@ -{start},{old} +{start},{new} @@ def {draw(NAME)}():\n")
            # a removed line that itself starts with "-- " looks like a file header: counts decide
            out.extend(f"{c}{draw(st.sampled_from(['-- x', '++ y', '']))}{draw(ANY_LINE)}\n" for c in body)
            start += old + 10
    return "".join(out)


@st.composite
def csv_table(draw: st.DrawFn) -> str:
    rows = ["id,name,score\n"]
    scores = draw(st.lists(st.integers(0, 10**6), min_size=60, max_size=600))
    rows.extend(f"{i},name{i * 7 % 13},{score}\n" for i, score in enumerate(scores))
    return "".join(rows)


@st.composite
def log_text(draw: st.DrawFn) -> str:
    kinds = draw(st.lists(WORDS, min_size=1, max_size=6))
    out = []
    for i in range(draw(st.integers(40, 150))):
        level = draw(st.sampled_from(["INFO", "WARN", "ERROR"]))
        out.append(f"2026-11-30T10:{i // 60 % 60:02d}:{i % 60:02d}Z {level} {draw(st.sampled_from(kinds))}\n")
        if draw(st.booleans()):
            out.extend([out[-1]] * draw(st.integers(1, 6)))  # exact repeats
    return "".join(out)


@st.composite
def markdown_text(draw: st.DrawFn) -> str:
    out = []
    for _ in range(draw(st.integers(3, 30))):
        out.append(f"{'#' * draw(st.integers(1, 4))} {draw(WORDS)}\n\n")
        for item in draw(
            st.lists(st.tuples(st.sampled_from(["- ", "", "1. "]), WORDS), min_size=1, max_size=12)
        ):
            out.append(f"{item[0]}{item[1]} [link](http://x/{len(out)})\n")
        out.append("\n```\ncode block # not a heading\n```\n\n")
    return "".join(out)


_HEADER = re.compile(r"(?:--- a/|\+\+\+ b/)")
FORMATTED = st.one_of(python_source(), unified_diff(), csv_table(), log_text(), markdown_text())


def _check(texts: list[str], budget: int, hint: RecoveryHint, terms: tuple[str, ...] = ()) -> None:
    try:
        result = shrink_texts(texts, budget, hint, terms)
    except ShrinkError:
        assert budget < 4000 or len(texts) > 1
        return
    if sum(map(len, texts)) <= budget:
        assert result is None
        return
    assert result is not None
    assert sum(map(len, result.texts)) + len(result.notice or "") <= budget
    joined = "\n".join(texts)
    line = 1
    for k, (text, preview) in enumerate(zip(texts, result.texts, strict=True)):
        if preview.startswith("[mcpsqueeze] Outline of"):
            rebuilt = rebuild(preview, joined, first_line=line)
            # Lines are those of the joined text: a block's last line, folded, comes back with the
            # newline that joins it to the next block.
            assert rebuilt == text or (k < len(texts) - 1 and rebuilt == text + "\n")
            _check_counts(preview, joined)
        line += text.count("\n") + 1


def _check_counts(preview: str, joined: str) -> None:
    for first, last, words in folds(preview):
        folded = split_lines(joined)[first - 1 : last]
        assert len(folded) == last - first + 1
        headers = any(_HEADER.match(line) for line in folded)  # a fold of file headers counts them "other"
        for sign, count in re.findall(r"(?:^| )([+-])(\d+)", words):  # diffstat: +12 -20
            prefixed = sum(line.startswith(sign) for line in folded)
            assert int(count) == prefixed or (headers and int(count) < prefixed)
        rows = re.fullmatch(r"(\d+) rows?", words)
        if rows:
            assert int(rows.group(1)) == sum(1 for line in folded if line.strip())
        repeats = re.fullmatch(r"the line above (\d+) more times?", words)
        if repeats:
            assert int(repeats.group(1)) == len(folded) and len(set(folded)) == 1


@SETTINGS
@given(FORMATTED, BUDGETS, HINTS)
def test_outlines_fit_and_rebuild_the_original_exactly(text: str, budget: int, hint: RecoveryHint) -> None:
    _check([text], budget, hint)


@settings(SETTINGS, max_examples=10)
@given(FORMATTED, FORMATTED, BUDGETS, HINTS)
def test_outlines_of_several_blocks_number_lines_in_the_joined_text(
    first: str, second: str, budget: int, hint: RecoveryHint
) -> None:
    _check([first, second], budget, hint)


@SETTINGS
@given(st.lists(ANY_LINE, min_size=30, max_size=400), st.data(), BUDGETS, HINTS)
def test_query_led_previews_of_any_lines_rebuild_exactly(
    lines: list[str], data: st.DataObject, budget: int, hint: RecoveryHint
) -> None:
    text = "\n".join(line * 3 for line in lines)
    words = re.findall(r"\w{3,}", text)
    terms = tuple(data.draw(st.lists(st.sampled_from(words), max_size=3))) if words else ()
    _check([text], budget, hint, terms)


@SETTINGS
@given(st.text(max_size=300), st.data())
def test_lines_read_back_join_into_the_text(text: str, data: st.DataObject) -> None:
    lines = split_lines(text)
    assert "".join(lines) == text
    if not lines:
        return
    cut = sorted(set(data.draw(st.lists(st.integers(1, len(lines)), max_size=5))) | {len(lines)})
    parts, start = [], 1
    for end in cut:
        if end >= start:
            begin, stop, *_ = line_span(text, f"{start}-{end}")
            parts.append(text[begin:stop])
            start = end + 1
    assert "".join(parts) == text
