"""Search inside a stored original: grep (RE2, linear time) and BM25 search, answering
lines with the numbers fold markers use, or JSON values with their RFC 6901 pointers."""

from __future__ import annotations

import re
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcpsqueeze._errors import UsageError
from mcpsqueeze._lines import split_lines
from mcpsqueeze.core._search import SearchLimits, grep, search
from mcpsqueeze.recovery import resolve_pointer
from mcpsqueeze.shrink._rank import rank_lines, search_terms


def _source(n: int) -> str:
    return "".join(
        f"def parse_{i}(x):\n" if i % 10 == 0 else f"    value_{i} = x + {i}\n" for i in range(1, n + 1)
    )


def test_grep_answers_matching_lines_numbered_as_split_lines_numbers_them() -> None:
    text = _source(100)
    found = grep(text, r"^def parse_\d+", context=0)
    assert found.hits == tuple(range(10, 101, 10))
    assert found.total == 10 and found.next_skip is None and found.complete
    for number in found.hits:
        line = split_lines(text)[int(number) - 1].rstrip("\n")
        assert f"\n{number}:{line}\n" in f"\n{found.text}\n"


def test_context_lines_surround_each_match_and_overlapping_groups_merge() -> None:
    text = _source(40)
    found = grep(text, r"parse_(10|20)\(", context=2)
    assert found.hits == (10, 20)
    lines = split_lines(text)
    for number in (8, 9, 11, 12, 18, 19, 21, 22):
        assert f"{number}-{lines[number - 1].rstrip()}" in found.text
    assert "\n--\n" in found.text  # two groups, separated as grep separates them
    assert "7-" not in found.text and "13-" not in found.text
    close = grep(text, r"value_(11|13) ", context=2)
    assert close.hits == (11, 13)
    assert "--" not in close.text  # 9-15 is one group: 12 is shown once, as context
    assert close.text.count("12-") == 1
    assert grep(text, r"parse_10\(", context=0).text.count("\n") < found.text.count("\n")


def test_the_answer_fits_the_budget_and_says_how_to_page() -> None:
    text = _source(5000)
    found = grep(text, "value", budget=2000)
    assert len(found.text) <= 2000
    assert 0 < len(found.hits) < found.total == 4500
    assert found.next_skip == len(found.hits)
    assert f"skip={len(found.hits)}" in found.text


def test_paging_with_skip_visits_every_match_once_in_order() -> None:
    text = _source(3000)
    wanted = [n for n, line in enumerate(split_lines(text), 1) if re.search(r"_[0-9]*7[0-9]* ", line)]
    seen: list[int] = []
    skip: int | None = 0
    pages = 0
    while skip is not None:
        found = grep(text, r"_[0-9]*7[0-9]* ", skip=skip, budget=3000, context=1)
        assert len(found.text) <= 3000
        seen.extend(found.hits)
        skip = found.next_skip
        pages += 1
    assert seen == wanted and pages > 3
    with pytest.raises(UsageError, match="skip"):
        grep(text, r"_[0-9]*7[0-9]* ", skip=len(wanted))


def test_the_case_flag_decides_whether_case_matters() -> None:
    text = "Error: disk full\nerror: retry\nERROR!\nfine\n"
    assert grep(text, "error").hits == (2,)
    assert grep(text, "error", ignore_case=True).hits == (1, 2, 3)
    assert grep(text, "(?i)error").hits == (1, 2, 3)


def test_an_empty_match_does_not_invent_a_line_after_the_last_newline() -> None:
    assert grep("a\nb\n", "^").hits == (1, 2)
    assert grep("a\nb", "$").hits == (1, 2)
    assert grep("", "x").total == 0
    # a match never runs across a line end: grep is line by line
    assert grep("foo\nbar\n", r"foo\s*bar").total == 0
    assert grep("foo\nbar\n", r"o$").hits == (1,)


def test_json_answers_the_matching_values_with_their_pointers() -> None:
    document = {
        "issues": [{"title": "fix the parser", "n": 17}, {"title": "docs", "n": 170}],
        "a/b": {"c~d": "parser here", "ok": True},
    }
    found = grep(document, "parser")
    assert found.hits == ("/issues/0/title", "/a~1b/c~0d")
    for pointer in found.hits:
        assert isinstance(pointer, str)
        assert "parser" in resolve_pointer(document, pointer)
        assert pointer in found.text
    numbers = grep(document, "^17", base="/x")
    assert numbers.hits == ("/x/issues/0/n", "/x/issues/1/n")
    assert '"fix the parser"' in grep(document, "fix").text  # the value, as JSON
    assert grep(document, "true").hits == ("/a~1b/ok",)


def test_search_ranks_lines_by_the_same_bm25_as_previews() -> None:
    lines = [
        "nothing here\n",
        "the parser reads a line\n",
        "line\n",
        "parse_line is where the parser splits a line into parts\n",
        "a parser\n",
    ] * 3
    text = "".join(lines)
    found = search(text, "parser line", context=0)
    expected = [i + 1 for i in rank_lines(lines, search_terms("parser line"), limit=len(lines), text=text)]
    assert list(found.hits) == expected
    assert found.total == 12
    assert found.hits[0] in (2, 4, 7, 9, 12, 14)  # a line with both words comes first


def test_search_over_json_ranks_values_and_names_their_pointers() -> None:
    document = {
        "commits": [{"author": "ann", "message": "fix parser crash"}, {"author": "bob", "message": "docs"}]
    }
    found = search(document, "parser crash")
    assert found.hits == ("/commits/0/message",)


def test_a_hostile_pattern_on_one_megabyte_is_answered_in_bounded_time() -> None:
    for text in ("a" * 1_000_000 + "b", ("a" * 99 + "b\n") * 10_000, "a" * 1_000_000):
        for pattern in (r"(a+)+$", r"(.*a){100}", r"(\w*\w*\w*){30}$"):
            started = time.monotonic()
            found = grep(text, pattern)
            assert time.monotonic() - started < 2.0, pattern
            assert found.total <= text.count("\n") + 1


def test_the_time_cap_stops_a_long_search_and_says_so() -> None:
    text = "x\n" * 2_000_000
    found = grep(text, "x", limits=SearchLimits(seconds=0.0))
    assert not found.complete
    assert "stopped" in found.text and "at least" in found.text


def test_patterns_re2_cannot_run_are_rejected_with_a_usage_error_saying_why() -> None:
    with pytest.raises(UsageError, match="backreference"):
        grep("aa", r"(a)\1")
    with pytest.raises(UsageError, match="lookaround"):
        grep("aa", r"a(?=a)")
    with pytest.raises(UsageError, match="RE2"):
        grep("aa", r"((a{100}){100}){100}")
    with pytest.raises(UsageError, match="RE2"):
        grep("aa", r"[\p{L}\p{N}]{1000}")
    with pytest.raises(UsageError, match="RE2"):
        grep("aa", "(")
    with pytest.raises(UsageError, match="characters"):
        grep("aa", "a" * 2000)
    with pytest.raises(UsageError, match="empty"):
        grep("aa", "")


def test_an_original_over_the_size_cap_is_refused_with_how_to_narrow_it() -> None:
    with pytest.raises(UsageError, match="pointer"):
        grep("a" * 5000, "a", limits=SearchLimits(max_bytes=1000))


def test_a_match_on_a_very_long_line_is_shown_around_the_match_within_the_budget() -> None:
    text = "short\n" + "x" * 50_000 + "NEEDLE" + "y" * 50_000 + "\nend\n"
    found = grep(text, "NEEDLE", budget=2000)
    assert found.hits == (2,)
    assert "NEEDLE" in found.text and len(found.text) <= 2000
    assert "1-short" in found.text and "3-end" in found.text


def test_a_search_with_no_usable_words_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match="search"):
        search("abc", "  ")
    assert search("abc\n", "zzz").total == 0


# -- through the request every door parses, and the core answer ------------------------------------------

RID = "ab" * 16


def _original(text: str) -> dict[str, object]:
    return {"content": [{"type": "text", "text": text}]}


def test_the_recover_request_takes_grep_and_search_and_refuses_what_does_not_combine() -> None:
    from mcpsqueeze.core._request import RecoverRequest

    asked = RecoverRequest.parse(
        {"response_id": RID, "grep": "x+", "ignore_case": "true", "context": "3", "skip": 10}
    )
    assert (asked.grep, asked.ignore_case, asked.context, asked.skip) == ("x+", True, 3, 10)
    assert RecoverRequest.parse(asked.arguments()) == asked
    for arguments, message in (
        ({"grep": "a", "search": "b"}, "not both"),
        ({"grep": "a", "lines": "1-2"}, "does not combine with lines"),
        ({"search": "a", "query": "x"}, "does not combine with query"),
        ({"context": 2}, "goes with grep or search"),
        ({"grep": "(a)\\1"}, "backreference"),
        ({"grep": "a", "context": 99}, "at most"),
        ({"grep": "a", "context": -1}, "context must be a whole number"),
        ({"grep": "a", "ignore_case": "maybe"}, "true or false"),
        ({"search": "  "}, "words"),
    ):
        with pytest.raises(UsageError, match=message):
            RecoverRequest.parse({"response_id": RID, **arguments})


def test_the_core_answer_pages_with_the_next_call_in_meta() -> None:
    from mcpsqueeze.core._recover import answer
    from mcpsqueeze.core._request import RecoverRequest

    text = _source(3000)
    wanted = sum("value_1" in line for line in split_lines(text))
    arguments: dict[str, object] | None = {"response_id": RID, "grep": "value_1", "context": 0}
    seen: list[str] = []
    while arguments is not None:
        result = answer([_original(text)], RecoverRequest.parse(arguments))
        meta = result["_meta"]
        assert meta["mcpsqueeze/search"]["total"] == wanted
        seen += [line for line in result["content"][0]["text"].split("\n") if re.match(r"\d+:", line)]
        arguments = meta.get("mcpsqueeze/next")
    assert len(seen) == wanted == 1000


def test_the_core_answer_searches_json_values_and_the_part_a_pointer_names() -> None:
    import json

    from mcpsqueeze.core._recover import answer
    from mcpsqueeze.core._request import RecoverRequest

    document = {"files": [{"path": "a.py", "body": "import os\ndef main():\n    os.exit(1)\n"}]}
    original = _original(json.dumps(document))
    whole = answer([original], RecoverRequest.parse({"response_id": RID, "grep": "os\\.exit"}))
    assert "/files/0/body: " in whole["content"][0]["text"]
    inside = answer(
        [original], RecoverRequest.parse({"response_id": RID, "grep": "exit", "pointer": "/files/0/body"})
    )
    assert "3:    os.exit(1)" in inside["content"][0]["text"]  # a string's own lines
    assert "mcpsqueeze/next" not in inside["_meta"]


@settings(max_examples=200, deadline=None)
@given(
    text=st.text(alphabet="ab \n\r\x85\u2028é", max_size=300),
    needle=st.text(alphabet="abé ", min_size=1, max_size=3),
    context=st.integers(0, 3),
)
def test_grep_finds_exactly_the_lines_that_hold_a_literal_numbered_as_split_lines(
    text: str, needle: str, context: int
) -> None:
    lines = split_lines(text)
    wanted = [n for n, line in enumerate(lines, 1) if needle in line.rstrip("\n")]
    seen: list[int | str] = []
    skip: int | None = 0
    while skip is not None:
        found = grep(text, re.escape(needle), context=context, skip=skip, budget=1000)
        assert len(found.text) <= 1000
        seen += found.hits
        skip = found.next_skip
    assert seen == wanted


def test_a_result_with_structured_content_and_no_text_is_searched_by_its_values() -> None:
    from mcpsqueeze.core._recover import answer
    from mcpsqueeze.core._request import RecoverRequest

    original = {"content": [], "structuredContent": {"rows": [{"name": "alpha"}, {"name": "beta"}]}}
    found = answer([original], RecoverRequest.parse({"response_id": RID, "grep": "^b"}))
    assert found["content"][0]["text"].endswith('\n/rows/1/name: "beta"')


def test_the_answers_an_agent_reads_are_pinned() -> None:
    from pathlib import Path

    from rawclient import assert_golden

    text = _source(60) + "x" * 900 + "parse_long" + "y" * 900 + "\n"
    document = {
        "issues": [{"key": f"DEMO-{i}", "title": f"parse {'error' if i % 4 else 'crash'}"} for i in range(9)]
    }
    parts = [
        (
            "grep 'parse_[0-9]+' context 1 budget 1000",
            grep(text, r"parse_[0-9]+", context=1, budget=1000).text,
        ),
        ("grep 'PARSE_LONG' ignore_case", grep(text, "PARSE_LONG", ignore_case=True, context=0).text),
        ("grep 'zzz'", grep(text, "zzz").text),
        ("search 'parse value_7' context 0", search(text, "parse value_7", context=0, budget=1000).text),
        ("grep '^DEMO-[0-3]$' on JSON", grep(document, "^DEMO-[0-3]$", base="/r").text),
        ("search 'crash' on JSON", search(document, "crash").text),
    ]
    for pattern in (r"(a)\1", "a(?<=b)"):
        try:
            grep(text, pattern)
        except UsageError as exc:
            parts.append((f"grep {pattern!r} refused", str(exc)))
    body = "".join(f"## {name}\n{answer}\n" for name, answer in parts)
    assert_golden(Path(__file__).with_name("golden") / "search_answers.txt", body)
