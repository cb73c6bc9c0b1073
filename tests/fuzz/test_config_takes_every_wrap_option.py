"""`mcpsqueeze config` takes every option of `wrap` (both come from the one table of
settings), so a `wrap` line pasted after `config` works and prints where each setting came from."""

from __future__ import annotations

from pathlib import Path

import click

from mcpsqueeze.cli import main
from memwrap import run_cli
from rawclient import empty_config

EMPTY = empty_config()  # (a config file must be a regular file only its owner writes)


def _options(command: str) -> set[str]:
    found = main.commands[command]
    return {opt for p in found.params if isinstance(p, click.Option) for opt in p.opts + p.secondary_opts}


def test_config_has_every_wrap_option() -> None:
    missing = _options("wrap") - _options("config")
    assert not missing, missing


def test_a_pasted_wrap_line_works_after_config(tmp_path: Path) -> None:
    secret = tmp_path / "secret"
    secret.write_text("s3cret\n", encoding="utf-8")
    secret.chmod(0o600)
    wrap_line = [
        "--transport", "streamable-http", "--log-level", "info", "-q", "--port", "9999", "--host", "127.0.0.1",
        "--token-file", str(tmp_path / "token"), "-H", "X-Team=a b", "--oauth-client-id", "cid",
        "--oauth-client-secret-file", str(secret), "--oauth-login", "never", "--max-sessions", "3",
        "--name", "gh", "--budget", "9000", "--no-dedup", "--cache-ttl", "off", "--timeout", "30",
        "--", "https://example.com/mcp",
    ]  # fmt: skip
    done = run_cli("config", "--config", str(EMPTY), *wrap_line)
    assert done.returncode == 0, done.stderr
    rows = {
        line.split("=")[0].strip(): line.split("=", 1)[1].strip()
        for line in done.stdout.splitlines()
        if " = " in line
    }
    assert rows["transport"] == "streamable-http  (flag --transport)"
    assert rows["port"] == "9999  (flag --port)" and rows["max_sessions"] == "3  (flag --max-sessions)"
    assert rows["server_name"] == "gh  (flag --name)" and rows["log_level"] == "info  (flag --log-level)"
    assert rows["quiet"] == "true  (flag --quiet)" and rows["cache_ttl"] == "off  (flag --cache-ttl)"
    assert rows["token_file"] == f"{tmp_path / 'token'}  (flag --token-file)"
    assert rows["timeout"] == "30s  (flag --timeout)" and rows["dedup"] == "false  (flag --no-dedup)"


def test_a_command_backend_after_config_keeps_its_own_options() -> None:
    done = run_cli(
        "config", "--config", str(EMPTY), "--budget", "9000", "mcp-server-git", "--repository", "/x"
    )
    assert done.returncode == 0, done.stderr
    assert "9000  (flag --budget)" in done.stdout
