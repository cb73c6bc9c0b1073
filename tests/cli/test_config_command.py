"""`mcpsqueeze config` (and wrap and serve, which read the same options): a value a variable gave that
cannot be read is refused naming that variable, with the values it takes (never an empty string among
them); and the printout shows every setting the command takes, at its default or not, with its source."""

from __future__ import annotations

import os
import re

import pytest
from click.testing import CliRunner

from mcpsqueeze.cli import main
from mcpsqueeze.settings import KNOBS
from rawclient import empty_config

pytestmark = pytest.mark.fuzz

EMPTY = empty_config()
CONFIG_ROWS = [row for row in KNOBS if "config" in row.doors]


def _unreadable(row: object) -> str | None:
    """A value this row's kind refuses (None when it takes any text, as a path does)."""
    for text in ("maybe", "abc", "-5", "nonsense", "1e999"):
        try:
            row.kind.parse(text)  # type: ignore[attr-defined]
        except ValueError:
            return text
    return None


def _config(env: dict[str, str], *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(
        main, ["config", "--config", str(EMPTY), *args], env=env, catch_exceptions=False
    )
    return result.exit_code, result.output


REFUSABLE = [  # the rows the command line takes (a flag, and its variable)
    (row.env_name, bad)
    for row in CONFIG_ROWS
    if row.flag is not None and row.env_name and (bad := _unreadable(row))
]


@pytest.mark.parametrize(("variable", "bad"), REFUSABLE, ids=[v for v, _ in REFUSABLE])
def test_an_unreadable_variable_is_refused_naming_the_variable(variable: str, bad: str) -> None:
    code, output = _config({variable: bad})
    assert code == 2, output
    assert f"Invalid value for {variable}:" in output, output
    assert not re.search(r"--[a-z]", output.split("Error:", 1)[1]), output  # not a flag it never saw
    assert ": ," not in output and "values: ," not in output


def test_the_same_value_from_a_flag_still_names_the_flag() -> None:
    code, output = _config({}, "--budget", "abc")
    assert code == 2 and "Invalid value for '--budget'" in output


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("1", "true"),
        ("yes", "true"),
        ("on", "true"),
        ("0", "false"),
        ("no", "false"),
        ("off", "false"),
        ("false", "false"),
    ],
)
def test_a_switch_variable_takes_the_words_its_error_names(text: str, value: str) -> None:
    code, output = _config({"MCPSQUEEZE_SHRINK": text})
    assert code == 0, output
    assert re.search(rf"^  shrink +\= {value}  \(env MCPSQUEEZE_SHRINK\)$", output, re.M), output


def test_config_prints_every_setting_it_takes_even_at_its_default() -> None:
    code, output = _config({k: v for k, v in os.environ.items() if not k.startswith("MCPSQUEEZE_")})
    assert code == 0, output
    printed = re.findall(r"^  (\w+) +=", output, re.M)
    assert printed == [row.name for row in CONFIG_ROWS]
    for name in ("compress_tools", "recovery_url", "transport", "port", "log_level"):
        assert re.search(rf"^  {name} += \S.*\(default\)$", output, re.M), name
