"""Which backend command `wrap` spawns before its command line parser is imported (`_prestart`)."""

from __future__ import annotations

import pytest

from mcpsqueeze.transports._prestart import early_command


@pytest.mark.parametrize(
    ("args", "command"),
    [
        (["wrap", "--", "node", "server.js", "--", "x"], ["node", "server.js", "--", "x"]),
        (["wrap", "--budget", "9000", "--name", "fs", "--", "npx", "-y", "pkg"], ["npx", "-y", "pkg"]),
        (["wrap", "--transport", "stdio", "--", "srv"], ["srv"]),
        (["wrap", "--transport=stdio", "--", "srv"], ["srv"]),
        (["wrap", "--", "srv", "--help"], ["srv", "--help"]),  # the server's own flags
    ],
)
def test_the_command_after_the_separator_starts_early(args: list[str], command: list[str]) -> None:
    assert early_command(args) == command


@pytest.mark.parametrize(
    "args",
    [
        ["wrap", "node", "server.js"],  # no separator: only the parser tells the command from options
        ["wrap", "--"],
        ["wrap", "--", "https://example.com/mcp"],
        ["wrap", "--transport", "streamable-http", "--", "srv"],
        ["wrap", "--transport=streamable-http", "--", "srv"],
        ["wrap", "--transport", "--", "srv"],
        ["wrap", "--help", "--", "srv"],
        ["wrap", "-h", "--", "srv"],
        ["serve", "--", "srv"],
        ["--version", "wrap", "--", "srv"],
        [],
    ],
)
def test_any_other_command_line_is_left_to_wrap(args: list[str]) -> None:
    assert early_command(args) is None
