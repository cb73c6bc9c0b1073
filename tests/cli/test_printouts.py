"""Config error line numbers stay right after a value holding U+2028 (or another
character Python counts as a line break but TOML does not); `mcpsqueeze config` never prints `nans`
or an exponent; a tool name with a newline stays on one row of the text stats report."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mcpsqueeze.settings._file import ConfigError, parse_config_text
from memwrap import run_cli
from rawclient import empty_config

pytestmark = pytest.mark.fuzz

EMPTY = empty_config()  # (a config file must be a regular file only its owner writes)


@pytest.mark.parametrize("separator", ["\u2028", "\u2029", "\x85"])
def test_error_line_numbers_count_only_newlines(tmp_path: Path, separator: str) -> None:
    text = f'[defaults]\nstats_file = "a{separator}b{separator}c"\njobs = 2\nbudget = 10\n'
    with pytest.raises(ConfigError) as caught:
        parse_config_text(text, tmp_path / "c.toml")
    assert f"{tmp_path / 'c.toml'}:4: budget = 10" in str(caught.value)


def test_config_prints_seconds_without_nan_or_exponent(tmp_path: Path) -> None:
    done = run_cli(
        "config", "--config", str(EMPTY), "--timeout", "0.25", "--cache-ttl", "3650d", "--retention", "1.5"
    )
    assert done.returncode == 0, done.stderr
    rows = {
        line.split("=")[0].strip(): line.split("=")[1].split("(")[0].strip()
        for line in done.stdout.splitlines()
        if " = " in line
    }
    assert rows["timeout"] == "0.25s" and rows["cache_ttl"] == "315360000s" and rows["retention"] == "1.5s"
    values = " ".join(rows.values())
    assert "e+" not in values and "nan" not in values


def test_a_tool_name_with_a_newline_stays_on_its_row(tmp_path: Path) -> None:
    path = tmp_path / "stats.jsonl"
    line = {"time": 1.0, "session": "s\n1", "server": "a\nb", "tool": "evil\nname\r\x1b[2J", "call": 1,
            "action": "shrunk", "chars_before": 10, "chars_after": 5, "tokens_before": 10, "tokens_after": 5}  # fmt: skip
    path.write_text(json.dumps(line) + "\n", encoding="utf-8")
    done = run_cli("stats", str(path))
    assert done.returncode == 0, done.stderr
    rows = done.stdout.splitlines()
    assert any(r.strip().startswith("evil\\nname\\r\\x1b[2J") for r in rows), done.stdout
    assert not any(r.strip().startswith("name") for r in rows), done.stdout
    assert "\x1b" not in done.stdout and "\r" not in done.stdout
    assert not any(r.strip().startswith("1 ") or r.strip() == "b" for r in rows), done.stdout
