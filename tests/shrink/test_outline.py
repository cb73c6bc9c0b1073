"""Format-aware outlines: what each format's preview keeps, pinned by golden files, and exact folds."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from outlines import folds, rebuild

from mcpsqueeze._lines import split_lines
from mcpsqueeze._voice import ShellVoice
from mcpsqueeze.shrink import RecoveryHint, landmarks, shrink_texts
from mcpsqueeze.shrink._formats import detect

FIXTURES = Path(__file__).parent / "fixtures"

# fixture, budget, expected strategy. The inputs are real outputs where there are some: this repo's
# own files and git history, and mcp-server-git's git_log/git_show/git_diff as it prints them.
CASES = [
    ("pointer.py", 2000, "text:outline-python"),
    ("lib.rs", 2000, "text:outline-rust"),
    ("server.go", 1600, "text:outline-go"),
    ("Inventory.java", 1600, "text:outline-java"),
    ("store.ts", 1600, "text:outline-js"),
    ("git_show.txt", 3000, "text:outline-diff"),
    ("mcp_git_show.txt", 3000, "text:outline-diff"),
    ("mcp_git_diff.txt", 4000, "text:outline-diff"),
    ("git_log.txt", 4500, "text:outline-gitlog"),
    ("mcp_git_log.txt", 4000, "text:outline-gitlog"),
    ("Cargo.lock", 2500, "text:outline-lock-toml"),
    ("compose.yaml", 2000, "text:outline-yaml"),
    ("requirements.txt", 1700, "text:outline-requirements"),
    ("README.md", 3000, "text:outline-markdown"),
    ("customers.csv", 2000, "text:outline-csv"),
    ("server.log", 2000, "text:outline-log"),
]


def _text(name: str) -> str:
    return (FIXTURES / name).read_text(encoding="utf-8")


@pytest.mark.parametrize(("name", "budget", "strategy"), CASES)
def test_each_format_has_a_golden_outline_that_fits_and_rebuilds_exactly(
    name: str, budget: int, strategy: str, hint: RecoveryHint, golden
) -> None:  # type: ignore[no-untyped-def]
    original = _text(name)
    result = shrink_texts([original], budget, hint)
    assert result is not None
    (preview,) = result.texts
    assert result.report.strategy == strategy
    assert len(preview) <= budget
    assert rebuild(preview, original) == original
    golden(f"outline_{name.replace('.', '_')}.txt", preview)


@pytest.mark.parametrize(("name", "budget", "strategy"), CASES)
def test_every_landmark_is_visible_verbatim_in_the_outline(
    name: str, budget: int, strategy: str, hint: RecoveryHint
) -> None:
    original = _text(name)
    result = shrink_texts([original], budget, hint)
    assert result is not None
    shown = set(result.texts[0].split("\n"))
    marks = landmarks(original)
    missing = [line for line in marks if line not in shown]
    if strategy == "text:outline-requirements":  # every line is a landmark: they cannot all show
        assert len(missing) < 0.3 * len(marks)
    else:
        assert not missing
    if strategy.startswith("text:outline-lock-"):  # a lock file's packages are markers that name them
        names = re.findall(r'^name = "([^"]+)"\nversion = "([^"]+)"', original, re.M)
        words = {w for _, _, w in folds(result.texts[0])}
        assert names and all(f"{n} {v}" in words for n, v in names)
    elif strategy not in ("text:outline-csv", "text:outline-log", "text:outline-repeats"):
        assert marks  # each of these formats has landmarks, and the function finds them


def test_a_shell_preview_names_the_mcpsq_command(golden) -> None:  # type: ignore[no-untyped-def]
    hint = RecoveryHint("0123456789abcdef0123456789abcdef", None, ShellVoice())
    result = shrink_texts([_text("server.go")], 1600, hint)
    assert result is not None
    header = result.texts[0].split("\n", 1)[0]
    assert "mcpsq recover 0123456789abcdef0123456789abcdef --lines " in header
    golden("outline_header_shell.txt", header)


def test_diff_markers_count_exactly_the_added_and_removed_lines_they_fold_as_diffstat_does(
    hint: RecoveryHint,
) -> None:
    original = _text("mcp_git_diff.txt")
    result = shrink_texts([original], 4000, hint)
    assert result is not None
    counted = 0
    for first, last, words in folds(result.texts[0]):
        folded = split_lines(original)[first - 1 : last]
        hunk = [line for line in folded if not line.startswith(("--- ", "+++ "))]  # file headers: not counted
        for sign, count in re.findall(r"(?:^| )([+-])(\d+)", words):
            assert int(count) == sum(line.startswith(sign) for line in hunk), (first, last, words)
            counted += 1
        if words == "unchanged":
            assert all(line.startswith(" ") for line in folded), (first, last)
        assert not re.search(r"added|removed", words)  # "+12 -20", not "12 added, 20 removed"
    assert counted


def test_log_markers_say_how_often_the_line_above_repeats(hint: RecoveryHint) -> None:
    original = "boot\n" + "retrying connection to db:5432\n" * 500 + "ready\n"
    result = shrink_texts([original], 1024, hint)
    assert result is not None
    assert "[lines 3-501 folded: the line above 499 more times]\nready\n" in result.texts[0]
    assert rebuild(result.texts[0], original) == original


def test_table_markers_count_rows_and_the_header_names_the_total(hint: RecoveryHint) -> None:
    original = _text("customers.csv")
    result = shrink_texts([original], 2000, hint)
    assert result is not None
    preview = result.texts[0]
    assert "(CSV table of 300 rows)" in preview
    assert preview.split("\n")[1] == original.split("\n")[0]  # the header row
    for first, last, words in folds(preview):
        assert words == f"{last - first + 1} rows"


def test_a_later_text_block_numbers_its_lines_in_the_joined_text(hint: RecoveryHint) -> None:
    first, second = _text("server.go"), _text("lib.rs")
    result = shrink_texts([first, second], 3500, hint)
    assert result is not None
    joined = first + "\n" + second
    offset = first.count("\n") + 1
    assert result.texts[1].startswith(f"[mcpsqueeze] Outline of lines {offset + 1}-")
    assert rebuild(result.texts[1], joined, first_line=offset + 1) == second


def test_lines_matching_the_query_are_kept_first(hint: RecoveryHint) -> None:
    original = _text("pointer.py")
    without = shrink_texts([original], 1500, hint)
    with_query = shrink_texts([original], 1500, hint, ("segment", "leading zeros"))
    assert without is not None and with_query is not None
    wanted = "must be an array index (digits without"
    assert wanted not in without.texts[0]
    assert wanted in with_query.texts[0]
    assert rebuild(with_query.texts[0], original) == original


def test_unrecognised_text_keeps_the_lines_that_stand_out_and_its_query_lines(hint: RecoveryHint) -> None:
    words = ("amber", "basil", "cedar", "delta", "ember", "fjord", "grove", "heron", "indigo", "juniper")
    prose = "".join(
        f"{words[i * 7919 % 10]} {words[i * 104729 % 9]} {words[i * i % 10]} note {i:05d} {words[i * 31 % 7]}\n"
        for i in range(3000)
    )
    prose = prose.replace("note 01500", "note 01500 the needle").replace("note 02001", "note 02001 haystack")
    plain = shrink_texts([prose], 3000, hint)
    assert plain is not None and plain.report.strategy == "text:outline-plain"
    assert "note 01500 the needle" in plain.texts[0]  # two words no other line has
    assert "haystack" not in plain.texts[0]  # one word alone does not stand out
    found = shrink_texts([prose], 3000, hint, ("haystack",))
    assert found is not None and found.report.strategy == "text:outline-query"
    assert "note 02001 haystack" in found.texts[0]
    assert rebuild(found.texts[0], prose) == prose


@pytest.mark.parametrize(
    "text",
    [
        "".join(f"A paragraph of prose number {i}, with commas, here and there.\n" for i in range(50)),
        "#!/bin/sh\n# Install things\nset -eu\n# Then run\n"
        + "".join(f"make step{i} && echo {i}\n" for i in range(40)),
        "# Title\n\nSome text only, no lists, no links, no fences.\n\n# Another\n\nMore text.\n" * 3,
        "def  x = 1\n" * 3,
        "a" * 5000 + "\n" + "b" * 3000 + "\nend\n",
    ],
)
def test_unsure_texts_are_not_given_a_format(text: str) -> None:
    assert detect(text, split_lines(text)) is None


def test_summary_says_lines_were_folded(hint: RecoveryHint) -> None:
    result = shrink_texts([_text("mcp_git_diff.txt")], 5000, hint)
    assert result is not None
    message = result.truncation["message"]
    assert isinstance(message, str)
    assert "lines folded" in message and "middle of long text" not in message


def test_a_document_that_quotes_a_diff_is_not_a_diff() -> None:
    quoted = "# Notes\n\nThe fix was:\n\n```diff\n" + _text("mcp_git_diff.txt").split("\n", 1)[1] + "```\n"
    found = detect(quoted, split_lines(quoted))
    assert found is None or found.name != "diff"


def test_query_terms_come_from_what_to_look_for_not_where() -> None:
    from mcpsqueeze.shrink import query_terms

    arguments = {"repo_path": "/work/big-repo", "pattern": "parse_line", "path": "src/x.py", "max_count": 5}
    assert query_terms(arguments) == ("parse_line", "src")
    assert query_terms({"query": "read-text file", "nested": {"q": ["Needle"]}}) == (
        "read-text",
        "read",
        "text",
        "file",
        "needle",
    )


def test_blank_lines_under_a_line_of_a_tab_have_no_landmarks_and_no_format() -> None:
    text = "\t\n" + "\n" * 6
    assert landmarks(text) == []
    assert detect(text, text.splitlines(keepends=True)) is None
