"""Every `wrap` option can also be given as a variable, `MCPSQUEEZE_<NAME>` from the one
table of settings, for clients that take options sharing their own names (the MCP Inspector CLI swallows
`--config`, `--transport`, `--log-level`, `--header`, ...) and pass only the variables they are told to."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import click

import mcpsqueeze
from mcpsqueeze.cli import main
from memwrap import run_cli
from rawclient import empty_config, require_node_paths

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


def test_the_inspector_cli_passes_settings_as_variables(tmp_path: Path) -> None:
    paths = require_node_paths("INSPECTOR_JS", "NODE22")
    src = str(Path(mcpsqueeze.__file__).resolve().parents[1])
    config = tmp_path / "config.toml"
    config.write_text('[policies."search_issues"]\nbudget = 1200\n', encoding="utf-8")
    for name, module in (("mcpsqueeze", "mcpsqueeze.cli"), ("demo-server", "mcpsqueeze.demo.server")):
        launcher = tmp_path / name  # (the Inspector takes `-m` as its own: start Python from a script)
        launcher.write_text(f'#!/bin/sh\nexec {sys.executable} -m {module} "$@"\n', encoding="utf-8")
        launcher.chmod(0o755)
    line = (  # (-e takes every KEY=VALUE after it: the variables go last)
        f"--cli {tmp_path / 'mcpsqueeze'} wrap -- {tmp_path / 'demo-server'} "
        "--method tools/call --tool-name {tool} --tool-arg {arg} "
        f"-e PYTHONPATH={src} -e MCPSQUEEZE_BUDGET=1500 -e MCPSQUEEZE_CONFIG={config} -e MCPSQUEEZE_RECOVERY=memory"
    )
    texts = {}
    for tool, arg in (("search_issues", "query=login"), ("list_rows", "table=users")):
        argv = shlex.split(line.format(tool=tool, arg=arg))
        done = subprocess.run(
            [paths["NODE22"], paths["INSPECTOR_JS"], *argv], cwd=tmp_path, capture_output=True, text=True,
            timeout=120, env={"PATH": os.environ["PATH"], "HOME": str(tmp_path), "LANG": "C.UTF-8"},
        )  # fmt: skip
        assert done.returncode == 0, done.stdout + done.stderr
        result = json.loads(done.stdout[: done.stdout.rindex("}") + 1])
        texts[tool] = "".join(b["text"] for b in result["content"] if b["type"] == "text")
    assert len(texts["search_issues"]) <= 1200  # the policy of the file named by MCPSQUEEZE_CONFIG
    assert 1200 < len(texts["list_rows"]) <= 1500  # MCPSQUEEZE_BUDGET
