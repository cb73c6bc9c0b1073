"""Every `wrap` option can also be given as a variable, `MCPSQUEEZE_<NAME>` from the one
table of settings, for clients that take options sharing their own names (the MCP Inspector CLI swallows
`--config`, `--transport`, `--log-level`, `--header`, ...) and pass only the variables they are told to
(the Inspector doing so for real: tests/cli/test_client_configs.py)."""

from __future__ import annotations

from pathlib import Path

import click

from mcpsqueeze.cli import main
from memwrap import run_cli
from rawclient import empty_config

EMPTY = empty_config()  # (a config file must be a regular file only its owner writes)

# --config is MCPSQUEEZE_CONFIG (read where the file is found, also by the Client); --shrinkfit is an alias
# of --budget (MCPSQUEEZE_BUDGET); --version and --help are not settings.
NOT_SETTINGS = {"config", "shrinkfit", "help", "version"}


def test_every_wrap_option_has_its_variable() -> None:
    missing = [
        p.opts
        for p in main.commands["wrap"].params
        if isinstance(p, click.Option) and p.name not in NOT_SETTINGS and not p.envvar
    ]
    assert not missing, missing
    for p in main.commands["wrap"].params:
        if isinstance(p, click.Option) and p.envvar:
            assert str(p.envvar).startswith("MCPSQUEEZE_") and str(p.envvar) in (p.help or ""), p.opts


def test_variables_set_what_the_flags_set(tmp_path: Path) -> None:
    env = {
        "MCPSQUEEZE_BUDGET": "9000",
        "MCPSQUEEZE_SHRINK": "false",
        "MCPSQUEEZE_TOONIFY": "1",
        "MCPSQUEEZE_TRANSPORT": "streamable-http",
        "MCPSQUEEZE_PORT": "9998",
        "MCPSQUEEZE_QUIET": "true",
        "MCPSQUEEZE_CACHE_TTL": "off",
        "MCPSQUEEZE_BACKEND_TIMEOUT": "12.5",
        "MCPSQUEEZE_NAME": "gh",
        "MCPSQUEEZE_HEADER": "X-A=one two\nX-B=three",
    }
    done = run_cli("config", "--config", str(EMPTY), "--", "https://example.com/mcp", env=env)
    assert done.returncode == 0, done.stderr
    rows = {
        line.split("=")[0].strip(): line.split("=", 1)[1].strip()
        for line in done.stdout.splitlines()
        if " = " in line
    }
    assert (
        rows["budget"] == "9000  (env MCPSQUEEZE_BUDGET)"
        and rows["shrink"] == "false  (env MCPSQUEEZE_SHRINK)"
    )
    assert (
        rows["toonify"] == "true  (env MCPSQUEEZE_TOONIFY)"
        and rows["quiet"] == "true  (env MCPSQUEEZE_QUIET)"
    )
    assert rows["transport"] == "streamable-http  (env MCPSQUEEZE_TRANSPORT)"
    assert (
        rows["port"] == "9998  (env MCPSQUEEZE_PORT)" and rows["server_name"] == "gh  (env MCPSQUEEZE_NAME)"
    )
    assert (
        rows["cache_ttl"] == "off  (env MCPSQUEEZE_CACHE_TTL)"
        and rows["timeout"] == "12.5s  (env MCPSQUEEZE_BACKEND_TIMEOUT)"
    )
    bad = run_cli("config", "--config", str(EMPTY), env={"MCPSQUEEZE_BACKEND_TIMEOUT": "nan"})
    assert bad.returncode == 2 and "MCPSQUEEZE_BACKEND_TIMEOUT" in bad.stderr and "finite" in bad.stderr
