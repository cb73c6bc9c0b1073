"""`serve` with a TOML config file (servers and per-tool policies), and the older servers JSON, via `mcpsq`."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from memwrap import Completed, Serve, mcpsq
from rawclient import demo_server


@pytest.fixture(autouse=True)
def config_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The user's config directory is the test's own; no config file named by the environment."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    monkeypatch.delenv("MCPSQUEEZE_CONFIG", raising=False)


@contextmanager
def _serve(tmp_path: Path, *args: str) -> Iterator[dict[str, str]]:
    sock = tmp_path / "run" / "s.sock"
    with Serve(["--recovery-dir", str(tmp_path / "rec"), "--socket", str(sock), *args]):
        yield {**os.environ, "MCPSQUEEZE_SOCKET": str(sock), "MCPSQUEEZE_RECOVERY_DIR": str(tmp_path / "rec")}


def _shim(env: dict[str, str], *args: str) -> Completed:
    return mcpsq(args, env)


def _toml_list(items: list[str]) -> str:
    return json.dumps(items)  # a JSON array of strings is a TOML array


def test_two_tools_of_one_server_get_their_policy_budgets_through_serve_and_mcpsq(tmp_path: Path) -> None:
    command, *args = demo_server()
    config = tmp_path / "config.toml"
    config.write_text(
        "[defaults]\nbudget = 6000\n\n"
        '[policies."demo:search_issues"]\nbudget = 2000\n\n'
        '[policies."demo:read_file"]\nshrink = false\n\n'
        f"[mcpServers.demo]\ncommand = {json.dumps(command)}\nargs = {_toml_list(args)}\n",
        encoding="utf-8",
    )
    with _serve(tmp_path, "--config", str(config)) as env:
        issues = _shim(env, "demo", "search-issues", "--query", "policy")
        rows = _shim(env, "demo", "list-rows", "--table", "t")
        prose = _shim(env, "demo", "read-file", "--path", "p.txt")
    assert issues.returncode == 0 and rows.returncode == 0 and prose.returncode == 0, issues.stderr
    assert len(issues.stdout.rstrip("\n")) <= 2000 and "mcpsq recover" in issues.stderr
    assert 2000 < len(rows.stdout.rstrip("\n")) <= 6000
    assert len(prose.stdout) > 6000 and prose.stderr == ""  # shrink = false: the whole text, no notice


def test_servers_json_still_works_as_config_and_as_servers_beside_a_default_settings_file(
    tmp_path: Path,
) -> None:
    command, *args = demo_server()
    servers = tmp_path / "servers.json"
    servers.write_text(json.dumps({"mcpServers": {"demo": {"command": command, "args": args}}}))
    settings = tmp_path / "xdg" / "mcpsqueeze" / "config.toml"
    settings.parent.mkdir(parents=True)
    settings.write_text('[policies."demo:list_rows"]\nbudget = 1500\n', encoding="utf-8")
    for how in ("--config", "--servers"):
        with _serve(tmp_path, how, str(servers)) as env:
            rows = _shim(env, "demo", "list-rows", "--table", "t")
        assert rows.returncode == 0, rows.stderr
        assert len(rows.stdout.rstrip("\n")) <= 1500, how  # the default TOML file's policy applies
