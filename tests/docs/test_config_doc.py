"""The config files the docs show load as written, and docs/config.md's Python runs against them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from docblocks import snippet
from mcpsqueeze.settings import load_config


def _file(tmp_path: Path, name: str) -> Path:
    path = tmp_path / "config.toml"
    path.write_text(snippet(name).text + "\n", encoding="utf-8")
    return path


def test_the_config_with_every_key_loads_and_its_policies_apply_by_glob(tmp_path: Path) -> None:
    config = load_config(_file(tmp_path, "config-every-key"))
    assert config.defaults["budget"] == 8000 and config.defaults["compress_tools"] == "medium"
    assert config.policy_for("github", "search_issues").budget == 4000
    assert config.policy_for("fs", "read_file").shrink is False
    assert config.policy_for("db", "query_rows").toonify is True
    assert config.servers is not None and config.servers["github"]["command"] == "github-mcp"


def test_wraps_short_config_loads_and_projects_before_shrinking(tmp_path: Path) -> None:
    config = load_config(_file(tmp_path, "readme-config-toml"))
    assert config.defaults["retention"] == 7 * 24 * 3600
    assert config.policy_for("jira", "search").query == "issues[].{key: key, summary: summary}"


def test_the_python_lower_level_runs_against_the_file_the_variable_names(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MCPSQUEEZE_CONFIG", str(_file(tmp_path, "config-every-key")))
    namespace: dict[str, Any] = {}
    exec(compile(snippet("config-from-python").text, "docs/config.md", "exec"), namespace)
    assert namespace["how"] == "MCPSQUEEZE_CONFIG"
    assert namespace["defaults"]["budget"] == 8000 and namespace["policy"].budget == 4000
    assert namespace["settings"].policy.budget == 8000
    assert namespace["servers"]["github"]["args"] == ["--stdio"]
