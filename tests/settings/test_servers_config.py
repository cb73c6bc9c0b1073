"""Parsing the servers config and the tool filters of `serve` (pure)."""

from __future__ import annotations

import json

import pytest

from mcpsqueeze import UsageError
from mcpsqueeze.settings import ToolFilter, parse_config, spec_from_argv


def test_the_usual_mcp_servers_json_gives_commands_and_urls() -> None:
    specs = parse_config(
        json.dumps(
            {
                "mcpServers": {
                    "github": {"command": "node", "args": ["gh.js"], "env": {"TOKEN": "x"}, "cwd": "/srv"},
                    "remote": {"url": "https://example.test/mcp", "headers": {"Authorization": "Bearer t"}},
                }
            }
        )
    )
    first = specs[0]
    assert (first.name, first.command, first.args, first.env, first.cwd) == (
        "github", "node", ("gh.js",), {"TOKEN": "x"}, "/srv",
    )  # fmt: skip
    assert specs[1].url == "https://example.test/mcp" and specs[1].headers["Authorization"] == "Bearer t"


@pytest.mark.parametrize(
    "document",
    [
        "not json",
        "{}",
        '{"mcpServers": {}}',
        '{"mcpServers": {"a b": {"command": "x"}}}',
        '{"mcpServers": {"a": {"args": ["x"]}}}',
        '{"mcpServers": {"a": {"command": "x", "args": "y"}}}',
        '{"mcpServers": {"a": {"command": "x", "env": {"K": 1}}}}',
    ],
)
def test_bad_configs_are_usage_errors_that_say_what_is_wrong(document: str) -> None:
    with pytest.raises(UsageError) as error:
        parse_config(document, "servers.json")
    assert "servers.json" in str(error.value)


def test_argv_backends_are_commands_or_urls() -> None:
    assert spec_from_argv("d", ["python", "-m", "x"]).args == ("-m", "x")
    assert spec_from_argv("d", ["http://127.0.0.1:1/mcp"], {"K": "V"}).headers == {"K": "V"}
    with pytest.raises(UsageError):
        spec_from_argv("d", [])


def test_tool_filters_take_globs_and_server_qualified_names() -> None:
    only = ToolFilter(include=("search_*", "gh:get_me"))
    assert only.allows("gh", "search_issues") and only.allows("gh", "get_me")
    assert not only.allows("other", "get_me") and not only.allows("gh", "delete_repo")
    hide = ToolFilter(exclude=("demo:crash", "get-env"))
    assert not hide.allows("demo", "crash") and hide.allows("other", "crash")
    assert not hide.allows("everything", "get-env")
