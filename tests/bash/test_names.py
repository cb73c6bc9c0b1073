"""Kebab-case command names and the way back to the original tool names."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mcpsqueeze.bash._catalog import ServerInfo
from mcpsqueeze.bash._names import command_names, kebab


@pytest.mark.parametrize(
    ("original", "expected"),
    [
        ("searchIssues", "search-issues"),
        ("search_issues", "search-issues"),
        ("search-issues", "search-issues"),
        ("Search Issues", "search-issues"),
        ("HTTPRequest", "http-request"),
        ("getV2Data", "get-v2-data"),
        ("page_id", "page-id"),
        ("pageId", "page-id"),
        ("__private__", "private"),
        ("a.b/c", "a-b-c"),
        ("___", "___"),
    ],
)
def test_kebab_turns_camel_snake_and_spaces_into_lowercase_words_joined_by_hyphens(
    original: str, expected: str
) -> None:
    assert kebab(original) == expected


def kebab_by_regex(name: str) -> str:
    """kebab() spelled with `re`, which the shim does not import (too slow for a command's start): the
    two must agree."""
    words = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1-\2", re.sub(r"([a-z0-9])([A-Z])", r"\1-\2", name))
    return re.sub(r"[^A-Za-z0-9]+", "-", words).strip("-").lower() or name


@given(st.text(alphabet=st.sampled_from("aAbBzZ09_- .éÉß\n"), max_size=16) | st.text(max_size=12))
def test_kebab_splits_words_exactly_as_the_regular_expressions_did(name: str) -> None:
    assert kebab(name) == kebab_by_regex(name)


def _server(*tools: str) -> ServerInfo:
    return ServerInfo({"name": "demo", "tools": [{"name": name} for name in tools]})


def _found(server: ServerInfo, typed: str) -> str | None:
    tool = server.tool(typed)
    return None if tool is None else tool.name


def test_both_spellings_of_one_name_collide_deterministically_and_each_stays_reachable() -> None:
    forward = _server("search_issues", "searchIssues")
    backward = _server("searchIssues", "search_issues")
    assert command_names(["search_issues", "searchIssues"]) == command_names(
        ["searchIssues", "search_issues"]
    )
    assert [(t.command, t.name) for t in forward.tools] == [(t.command, t.name) for t in backward.tools]
    assert _found(forward, "search-issues") == "searchIssues"  # "I" sorts before "_"
    assert _found(forward, "search-issues-2") == "search_issues"
    assert _found(forward, "search_issues") == "search_issues"  # the original spelling always works


def test_an_original_already_in_kebab_case_keeps_the_plain_name_on_a_collision() -> None:
    assert command_names(["searchIssues", "search-issues"]) == {
        "search-issues": "search-issues",
        "search-issues-2": "searchIssues",
    }


def test_a_command_name_wins_over_another_tools_original_spelling() -> None:
    server = _server("a_b", "a-b", "a-b-2")
    assert _found(server, "a-b-2") == "a_b"
    assert _found(server, "a-b-2-2") == "a-b-2"


def test_unknown_names_map_to_nothing() -> None:
    assert _found(_server("echo"), "ech") is None


@pytest.mark.parametrize(
    ("server", "kind"),
    [("time", "keyword"), ("if", "keyword"), ("test", "builtin"), ("echo", "builtin"), ("cd", "builtin"),
     ("grep", "command"), ("jq", "command")],
)  # fmt: skip
def test_a_server_named_like_a_shell_word_gets_a_prefixed_command_and_a_warning(
    server: str, kind: str
) -> None:
    from mcpsqueeze.bash._names import server_command

    command, warning = server_command(server)
    assert command == f"mcp-{server}"
    assert warning is not None and kind in warning and f"mcp-{server}" in warning
    assert f"mcpsq {server}" in warning


def test_an_ordinary_server_name_is_its_own_command() -> None:
    from mcpsqueeze.bash._names import server_command

    assert server_command("github") == ("github", None)


def test_the_prefixed_command_of_a_shell_word_server_calls_that_server_and_names_itself() -> None:
    import json
    from pathlib import Path

    from mcpsqueeze.bash._catalog import Catalog
    from mcpsqueeze.bash._core import CallPlan, Printout, plan

    body = json.loads((Path(__file__).with_name("fixtures") / "demo_servers.json").read_text())
    body["servers"][0]["name"] = "time"
    listing = Catalog.from_json(body)
    call = plan(["mcp-time", "echo", "--text", "hi"], listing, prefix="")
    assert isinstance(call, CallPlan)
    assert (call.server, call.tool, call.prog) == ("time", "echo", "mcp-time echo")
    helped = plan(["mcp-time", "--help"], listing, prefix="")
    assert isinstance(helped, Printout) and "mcp-time echo" in helped.stdout
    assert not isinstance(plan(["mcp-demo", "echo"], listing, prefix=""), CallPlan)  # not a shell word
