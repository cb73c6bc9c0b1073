"""docs/previews.md's recover listing and grep answers are what the product answers today."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator

import pytest

import mcpsqueeze
from docblocks import snippet
from mcpsqueeze.core._recover import recover_tool_definition
from mcpsqueeze.demo import _data


@pytest.fixture(scope="module")
def squeezer() -> Iterator[mcpsqueeze.Squeezer]:
    with_it = mcpsqueeze.Squeezer()
    yield with_it
    with_it.close()


def _stored(squeezer: mcpsqueeze.Squeezer, tool: str, arguments: dict[str, str], text: str) -> str:
    result = {"content": [{"type": "text", "text": text}]}
    presented = asyncio.run(squeezer.present("demo", tool, arguments, result))
    return str(presented["_meta"]["truncation"]["response_id"])


def _matches_with_gaps(shown: str, answer: str) -> None:
    """The doc's lines are the answer's, where a `...` line stands for lines left out."""
    lines, rest = answer.splitlines(), shown.splitlines()
    at = 0
    for n, line in enumerate(rest):
        if line == "...":
            tail = rest[n + 1 :]
            assert not tail or lines[-len(tail) :] == tail
            return
        assert lines[at] == line
        at += 1
    assert at == len(lines)


def test_the_recover_listing_shown_is_the_one_wrap_lists() -> None:
    shown = json.loads(snippet("recover-tool-listing").text)
    listed = recover_tool_definition("squeeze_recover")
    assert shown == {key: listed[key] for key in ("name", "description", "inputSchema")}


def test_the_grep_answer_on_text_is_the_products(squeezer: mcpsqueeze.Squeezer) -> None:
    arguments = {"path": "docs/architecture.md"}
    rid = _stored(squeezer, "read_file", arguments, _data.prose(arguments["path"]))
    answer = squeezer.recover(rid, grep="proxy", ignore_case=True, context=1)
    _matches_with_gaps(snippet("grep-text-answer").text, answer)


def test_the_grep_answer_on_json_is_the_products(squeezer: mcpsqueeze.Squeezer) -> None:
    issues = json.dumps(_data.search_issues("login bug", 300))
    rid = _stored(squeezer, "search_issues", {"query": "login bug"}, issues)
    _matches_with_gaps(snippet("grep-json-answer").text, squeezer.recover(rid, grep="^DEMO-101[0-3]$"))
