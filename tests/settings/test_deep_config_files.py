"""Config files nested past the depth bound (a servers JSON 100k levels deep, 3,000-deep
TOML inline tables, a 100k-deep array) are refused with exit 2 and a message naming the bound, never a
RecursionError traceback."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from mcpsqueeze.settings._file import MAX_CONFIG_DEPTH, ConfigError, parse_config_text
from memwrap import Completed, run_cli

pytestmark = pytest.mark.fuzz

DEEP = {
    "servers.json": '{"mcpServers": ' + "[" * 100_000 + "]" * 100_000 + "}",
    "objects.json": '{"mcpServers": {"a": ' + '{"x": ' * 100_000 + "1" + "}" * 100_000 + "}}",
    "inline.toml": "[defaults]\nbudget = 9000\n[mcpServers.a]\nenv = "
    + "{a = " * 3000
    + "1"
    + "}" * 3000
    + "\n",
    "array.toml": "[defaults]\nbudget = " + "[" * 100_000 + "]" * 100_000 + "\n",
}


def _run(*args: str) -> Completed:
    return run_cli(*args, stdin="")


@pytest.mark.parametrize("name", sorted(DEEP))
def test_deep_config_exits_2_naming_the_bound(tmp_path: Path, name: str) -> None:
    path = tmp_path / name
    path.write_text(DEEP[name], encoding="utf-8")
    for args in (("config", "--config", str(path)), ("serve", "--config", str(path))):
        done = _run(*args)
        assert done.returncode == 2, (args, done.stderr[-2000:])
        assert f"deeper than {MAX_CONFIG_DEPTH}" in done.stderr and "Traceback" not in done.stderr


def test_deep_servers_file_exits_2(tmp_path: Path) -> None:
    path = tmp_path / "servers.json"
    path.write_text(DEEP["objects.json"], encoding="utf-8")
    done = _run("serve", "--servers", str(path))
    assert done.returncode == 2 and f"deeper than {MAX_CONFIG_DEPTH}" in done.stderr, done.stderr[-2000:]


def test_brackets_inside_strings_and_comments_do_not_count() -> None:
    text = '[defaults]\nrecovery_url = "' + "[" * 500 + '"  # ' + "{" * 500 + "\n"
    with pytest.raises(ConfigError, match="Redis URL"):  # refused as a bad URL, not as too deep
        parse_config_text(text)
    nested = "[mcpServers.a]\ncommand = 'x'\nenv = " + "{a = " * 5 + '"1"' + "}" * 5 + "\n"
    with pytest.raises(Exception, match="env must be an object of strings"):
        from mcpsqueeze.settings import parse_servers

        parse_servers(parse_config_text(nested).servers)
    assert sys.getrecursionlimit() >= 1000
