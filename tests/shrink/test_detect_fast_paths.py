"""Each shortcut of format detection (`_formats.py`) against the plain definition it stands for, on text
made of the pieces those patterns look for: the same answers, only sooner."""

from __future__ import annotations

import csv

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from mcpsqueeze._lines import split_lines
from mcpsqueeze.shrink import _formats as F
from mcpsqueeze.shrink._locks import _starting

SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
# The characters and words the detection patterns turn on, so that matches, near misses and overlaps
# are common rather than rare.
PIECES = [
    "```", "~~~", "``", "~~", "\n", "\r\n", " ", "\t", ";", ";\n", "; \n", "{", "}", "\\", "&&", "||", "|", "&", "=>", "=",
    "FROM", "RUN ", "fi", "done", "esac", "import ", "from ", "export ", "const ", "let ", "var ", "x",
    "require('", "require(", "module.exports", "'use strict'", '"use strict"', "function ", "class ",
    "def ", "fn ", "(", ")", ":", "#", "# h", "- item", "1. ", "[a](b)", "**b", "`c`", ",", "a,b", '"',
    "2024-01-02 10:11", "INFO ", "abc1234 ", "é", "\u212a",
]  # fmt: skip
TEXT = st.lists(st.sampled_from(PIECES), max_size=120).map("".join)


@SETTINGS
@given(TEXT)
def test_unfenced_is_the_fence_pattern_substituted(text: str) -> None:
    assert F._unfenced(text) == F._FENCED_RE.sub("", text)


@SETTINGS
@given(TEXT)
def test_code_ends_count_what_the_alternation_finds(text: str) -> None:
    assert F._code_ends(text) == len(F._CODE_END_RE.findall(text))


SETEXT_PIECES = ["---", "===", "-", "=", " ", "\t", "\n", "\r\n", "a", " a", "# h", "--- x", "- item", ""]


@SETTINGS
@given(st.lists(st.sampled_from(SETEXT_PIECES), max_size=200).map("".join))
@example("a\n" * 398 + "---\nb\n===\n")  # underlines either side of the sample's last line
def test_setext_headings_are_the_underlines_counted_line_by_line(text: str) -> None:
    lines = split_lines(text)
    assert F._setext_headings(lines) == sum(
        bool(F._SETEXT_RE.match(lines[i])) and bool(lines[i - 1].strip()) and not lines[i - 1].startswith(" ")
        for i in range(1, min(len(lines), F.SAMPLE_LINES))
    )


@SETTINGS
@given(TEXT, st.sampled_from(['  version "', "[[package]]", "x", "  "]))
def test_lines_starting_with_a_prefix_are_counted_as_startswith_counts(text: str, prefix: str) -> None:
    lines = split_lines(text + prefix)
    assert _starting(lines, prefix) == sum(line.startswith(prefix) for line in lines)


@SETTINGS
@given(TEXT)
def test_the_signs_bound_is_never_below_the_count(text: str) -> None:
    for language in F.LANGUAGES.values():
        led = "\n" + text
        if not language.may_have_signs(text, led):
            assert language.count_signs(text, led) < language.min_signs


# The words and shapes of the definition patterns, so that definitions, near misses and several
# candidates on one line are common.
DEFINITION_PIECES = [
    *PIECES, "function", "function* gen", "async ", "default ", "abstract ", "class A", "constructor",
    "constructor (", "interface I", "type T", "enum E", "namespace N", "declare ", "  ", "    ",
    "foo(a) {", "get x() {", "static m<T>(a: T): void {", "if (x) {", "a.b = function", "const f = (a) =>",
    "let g = async x =>", "=> {", "{ ", " {\t", "pub fn f", "impl ", "struct S", "public ", "record R",
    "func F(", "type T struct", "x: number", "<T>", "$", "#m() {",
]  # fmt: skip
DEFINITION_TEXT = st.lists(st.sampled_from(DEFINITION_PIECES), max_size=150).map("".join)


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(DEFINITION_TEXT)
@example("  foo(a) {")  # a method's line that ends the text
@example("x\n  get y() { \nclass A\n")
def test_definitions_counted_on_candidate_lines_are_what_findall_counts(text: str) -> None:
    led = "\n" + text
    for language in F.LANGUAGES.values():
        assert language.count_definitions(led) == len(language.definition.findall(led))
        # the same with the candidate lines tried one by one (below findall's threshold, whatever the size)
        padded = led + "\n" + " " * (256 * 64)
        assert language.count_definitions(padded) == len(language.definition.findall(padded))


@SETTINGS
@given(
    st.lists(
        st.sampled_from(["abc1234 x", "1234567 y", "* abc1234 z", "no", "", "2024-01-02 10:11 a"]),
        max_size=60,
    )
)
def test_few_failing_lines_are_the_share_of_matching_lines(lines: list[str]) -> None:
    for pattern in (F._ONELINE_RE, F._LOG_LINE_RE):
        for failing, share in ((0.4, 0.6), (0.05, 0.95)):  # as detection asks for logs and one-line logs
            assert F.few_fail(lines, pattern.match, failing) == (
                sum(bool(pattern.match(line)) for line in lines) >= share * len(lines)
            )


def _table_plain(lines: list[str]) -> F.Format | None:
    """`_table` without its early refusal (the rows without the delimiter), as it was."""
    if len(lines) < 6:
        return None
    head = lines[0]
    delimiter = "\t" if head.count("\t") >= 1 and head.count("\t") >= head.count(",") else ","
    if head.count(delimiter) < 1:
        return None
    rows = [line.rstrip("\r\n") for line in lines[: F.SAMPLE_LINES] if line.strip()]
    try:
        parsed = list(csv.reader(rows, delimiter=delimiter, strict=True))
    except csv.Error:
        return None
    if not rows or len(parsed) != len(rows):
        return None
    width = len(parsed[0])
    if width < 2 or sum(len(r) == width for r in parsed) < 0.97 * len(parsed):
        return None
    if any(len(name) > 40 or len(name.split()) > 3 for name in parsed[0]):
        return None
    if len(set(rows)) < 0.5 * len(rows):
        return None
    if any(line.count('"') % 2 for line in rows):
        return None
    return F.Format("tsv", "TSV table") if delimiter == "\t" else F.Format("csv", "CSV table")


ROW = st.lists(st.sampled_from(["a", "b1", '"q"', '"x,y"', "", " ", "\t"]), min_size=1, max_size=4)


@SETTINGS
@given(st.lists(st.tuples(ROW, st.sampled_from([",", "\t", ";"])), min_size=6, max_size=60))
def test_the_table_refusal_answers_as_the_parse_would(rows: list[tuple[list[str], str]]) -> None:
    text = "".join(sep.join(cells) + "\n" for cells, sep in rows)
    lines = split_lines(text)
    assert F._table(lines) == _table_plain(lines)


def test_the_bound_is_for_these_signs() -> None:
    """The JavaScript bound is derived from this exact pattern: change one, revisit the other."""
    assert F.LANGUAGES["js"].signs.pattern == (
        r"^[ \t]*(?:import[ \t].*from[ \t]+['\"]|import[ \t]+['\"]|export[ \t]"
        r"|(?:const|let|var)[ \t]+\w+[ \t]*=)"
        r"|require\(['\"]|=>|;[ \t]*$|module\.exports|['\"]use strict['\"]"
    )


@SETTINGS
@given(
    st.integers(5, 120),
    st.integers(0, 6),
    st.sampled_from([",", "\t"]),
    st.randoms(use_true_random=False),
)
def test_a_table_with_a_few_rows_of_one_field_is_judged_as_the_parse_judges_it(
    rows: int, lone: int, delimiter: str, rng: object
) -> None:
    import random

    assert isinstance(rng, random.Random)
    body = [delimiter.join(f"v{i}{j}" for j in range(3)) for i in range(rows)]
    for _ in range(lone):  # rows without the delimiter, anywhere after the header
        body.insert(rng.randint(1, len(body)), f"lone{rng.randint(0, 9)}")
    lines = split_lines("name" + delimiter + "kind" + delimiter + "size\n" + "\n".join(body) + "\n")
    assert F._table(lines) == _table_plain(lines)
