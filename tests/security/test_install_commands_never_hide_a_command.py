"""`install-commands DIR` never hides a command already on PATH without a word: a server named like one
(`git`) gets `DIR/mcp-git`, with a warning naming the command it would have hidden and `--shadow`, which
keeps the server's own name. `mcp-git` runs the server `git` (run as a command: tests/bash/test_install.py);
`git status` still runs git."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from mcpsqueeze.bash._catalog import Catalog
from mcpsqueeze.bash._core import CallPlan, plan
from mcpsqueeze.cli._main import main

FIXTURES = Path(__file__).parents[1] / "bash" / "fixtures"


@pytest.fixture
def path_with_a_command(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """PATH with a directory holding an executable `othertool` first; that executable."""
    other = tmp_path / "other"
    other.mkdir()
    tool = other / "othertool"
    tool.write_text("#!/bin/sh\necho the real othertool\n")
    tool.chmod(0o755)
    monkeypatch.setenv("PATH", f"{other}{os.pathsep}{os.environ['PATH']}")
    return tool


def _install(directory: Path, *flags: str) -> tuple[int, str]:
    done = CliRunner().invoke(main, ["install-commands", str(directory), "--server", "othertool", *flags])
    return done.exit_code, done.output


def test_install_commands_does_not_hide_a_command_on_path_and_says_so(
    tmp_path: Path, path_with_a_command: Path
) -> None:
    bin_dir = tmp_path / "bin"
    code, output = _install(bin_dir)
    assert code == 0, output
    assert not (bin_dir / "othertool").exists() and (bin_dir / "mcp-othertool").exists()
    assert str(path_with_a_command) in output and "--shadow" in output and "mcpsq othertool" in output
    # DIR first on PATH: the real command is still the one the shell finds
    assert shutil.which("othertool", path=f"{bin_dir}{os.pathsep}{os.environ['PATH']}") == str(
        path_with_a_command
    )


def test_shadow_names_the_command_after_the_server_anyway(tmp_path: Path, path_with_a_command: Path) -> None:
    bin_dir = tmp_path / "bin"
    code, output = _install(bin_dir, "--shadow")
    assert code == 0 and (bin_dir / "othertool").exists() and "warning" not in output
    code, output = _install(bin_dir)  # installed again: our own file is no command to keep clear of
    assert code == 0 and (bin_dir / "mcp-othertool").exists() and str(path_with_a_command) in output


def test_a_server_without_a_command_of_its_name_keeps_its_name(tmp_path: Path) -> None:
    done = CliRunner().invoke(main, ["install-commands", str(tmp_path / "bin"), "--server", "zzq-none"])
    assert done.exit_code == 0 and (tmp_path / "bin" / "zzq-none").exists()
    assert "warning" not in done.output


def test_the_prefixed_command_runs_the_server_it_names() -> None:
    body = json.loads((FIXTURES / "demo_servers.json").read_text())
    body["servers"][0]["name"] = "git"
    call = plan(["mcp-git", "echo", "--text", "hi"], Catalog.from_json(body), prefix="")
    assert isinstance(call, CallPlan) and (call.server, call.tool) == ("git", "echo")
