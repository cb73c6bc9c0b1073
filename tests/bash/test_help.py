"""Every help text, pinned by golden files (MCPSQUEEZE_UPDATE_GOLDEN=1 rewrites them after a deliberate change)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mcpsqueeze.bash._catalog import Catalog
from mcpsqueeze.bash._help import first_sentence, render_listing, render_server, render_tool_help
from rawclient import assert_golden

HERE = Path(__file__).resolve().parent
GOLDEN = HERE / "golden"


def listing(down: bool = False) -> Catalog:
    body = json.loads((HERE / "fixtures" / "demo_servers.json").read_text())
    if down:
        body["servers"].append({"name": "github", "status": "down", "error": "spawn failed", "tools": []})
    return Catalog.from_json(body)


def check_golden(name: str, text: str) -> None:
    assert_golden(GOLDEN / name, text)


def test_listing_shows_every_tool_of_every_server_on_one_line() -> None:
    text = render_listing(listing(down=True))
    check_golden("listing.txt", text)
    assert "demo search-issues   Search the issue tracker.\n" in text
    assert all(len(line) <= 100 for line in text.splitlines())


def test_server_help_lists_only_that_servers_tools_for_an_installed_command() -> None:
    server = listing().server("demo")
    assert server is not None
    check_golden("server_demo.txt", render_server(server, prefix=""))


def test_kitchen_sink_help_shows_required_and_optional_flags_types_defaults_and_allowed_values() -> None:
    server = listing().server("demo")
    assert server is not None
    tool = server.tool("kitchen-sink")
    assert tool is not None
    text = render_tool_help("demo", tool)
    check_golden("kitchen_sink_help.txt", text)
    assert "Usage: mcpsq demo kitchen-sink --page-id STRING [flags]" in text
    assert "--mode fast|slow" in text and "default: 10" in text and "--json JSON|-" in text


@pytest.mark.parametrize("tool_name", ["search-issues", "image"])
def test_tool_help_golden_for_a_required_string_and_for_a_tool_without_flags(tool_name: str) -> None:
    server = listing().server("demo")
    assert server is not None
    tool = server.tool(tool_name)
    assert tool is not None
    check_golden(f"{tool_name}_help.txt", render_tool_help("demo", tool, prefix=""))


def test_first_sentence_stops_at_the_first_full_stop_and_cuts_long_text() -> None:
    assert first_sentence("Search issues. Returns JSON.", 80) == "Search issues."
    assert first_sentence("word " * 40, 20) == "word word word wo..."
    assert first_sentence("Line one\nline two", 80) == "Line one line two"
