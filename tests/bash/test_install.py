"""`install-commands`: one entry point per server, executable, secret-free, never clobbering others."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from mcpsqueeze._errors import UsageError
from mcpsqueeze.bash import install_commands

from .canned_session import Session


def test_entry_points_run_the_servers_tools_by_their_own_name(
    tmp_path: Path, shim_env: dict[str, str], session: Session
) -> None:
    bin_dir = tmp_path / "bin"
    [path] = install_commands(bin_dir, ["demo"], sys.executable)
    assert path == bin_dir / "demo" and path.stat().st_mode & 0o777 == 0o755
    env = shim_env | {"PATH": f"{bin_dir}:{shim_env['PATH']}"}
    done = subprocess.run(
        ["demo", "kitchen-sink", "--page-id", "x", "--tags", "t"], env=env, capture_output=True, text=True
    )
    assert (done.returncode, json.loads(done.stdout)) == (0, {"page_id": "x", "tags": ["t"]})
    helped = subprocess.run(["demo", "kitchen-sink", "--help"], env=env, capture_output=True, text=True)
    assert helped.stdout.startswith("Usage: demo kitchen-sink --page-id STRING [flags]\n")
    missing = subprocess.run(["demo", "kitchen-sink"], env=env, capture_output=True, text=True)
    assert missing.returncode == 2
    assert "see `demo kitchen-sink --help`" in missing.stderr


def test_a_renamed_copy_dispatches_on_its_new_name(tmp_path: Path, shim_env: dict[str, str]) -> None:
    [path] = install_commands(tmp_path / "bin", ["demo"], sys.executable)
    copy = tmp_path / "bin" / "github"
    copy.write_bytes(path.read_bytes())
    copy.chmod(0o755)
    done = subprocess.run([str(copy), "x"], env=shim_env, capture_output=True, text=True)
    assert done.returncode == 4 and "'github' is down" in done.stderr


def test_entry_points_hold_no_secrets_and_name_no_session(tmp_path: Path) -> None:
    [path] = install_commands(tmp_path, ["github"], "/opt/py/bin/python3")
    text = path.read_text()
    assert (
        "MCPSQUEEZE_SOCKET=" not in text
        and "Bearer" not in text
        and "token" not in text.lower().split("mcpsqueeze_token_file")[-1]
    )
    assert text.splitlines()[-1].startswith("exec '/opt/py/bin/python3' -I -c ")


def test_our_own_files_are_rewritten_but_a_foreign_file_is_never_overwritten(tmp_path: Path) -> None:
    install_commands(tmp_path, ["demo"], sys.executable)
    install_commands(tmp_path, ["demo"], sys.executable)  # idempotent
    (tmp_path / "github").write_text("#!/bin/sh\necho mine\n")
    (tmp_path / "linked").symlink_to(tmp_path / "demo")
    for name in ("github", "linked"):
        with pytest.raises(UsageError, match="Refusing to overwrite"):
            install_commands(tmp_path, ["demo", name], sys.executable)
    assert (tmp_path / "github").read_text() == "#!/bin/sh\necho mine\n"


@pytest.mark.parametrize("name", ["../evil", "a/b", "", "-rf", "recover", "a b"])
def test_server_names_that_cannot_be_commands_are_refused(tmp_path: Path, name: str) -> None:
    with pytest.raises(UsageError, match="cannot be a command name"):
        install_commands(tmp_path / "bin", [name], sys.executable)
    assert not (tmp_path / "bin").exists()


def test_quotes_in_the_interpreter_path_are_shell_safe(tmp_path: Path) -> None:
    odd = tmp_path / "it's python"
    odd.write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')
    odd.chmod(0o755)
    [path] = install_commands(tmp_path / "bin", ["demo"], str(odd))
    done = subprocess.run(
        [str(path), "--help"],
        env={"PATH": os.environ["PATH"], "MCPSQUEEZE_SOCKET": str(tmp_path / "none")},
        capture_output=True,
        text=True,
    )
    assert done.returncode == 3 and "mcpsqueeze serve" in done.stderr


def test_a_server_named_time_is_installed_as_mcp_time_and_runs_that_server(
    tmp_path: Path, shim_env: dict[str, str], session: Session
) -> None:
    bin_dir = tmp_path / "bin"
    [path] = install_commands(bin_dir, ["time"], sys.executable)
    assert path == bin_dir / "mcp-time" and not (bin_dir / "time").exists()
    # The canned session's server is "demo": a prefixed name that is no shell word resolves to nothing,
    # and the command names itself as typed (the alias itself is pinned in test_names).
    env = shim_env | {"PATH": f"{bin_dir}:{shim_env['PATH']}"}
    done = subprocess.run(["bash", "-c", "mcp-time --help"], env=env, capture_output=True, text=True)
    assert done.returncode == 2 and "mcp-time" in done.stderr, done.stderr


def test_install_commands_cli_warns_about_a_shell_word_server(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from mcpsqueeze.cli._main import main

    done = CliRunner().invoke(main, ["install-commands", str(tmp_path / "bin"), "--server", "test"])
    assert done.exit_code == 0, done.output
    assert str(tmp_path / "bin" / "mcp-test") in done.output
    assert "builtin" in done.output and "mcpsq test" in done.output


def test_the_installed_prefixed_command_finds_its_session(tmp_path: Path) -> None:
    """A server named like a command on PATH gets `mcp-NAME`, which runs that server's tools."""
    [path] = install_commands(tmp_path / "bin", ["ls"], sys.executable)
    assert path.name == "mcp-ls"
    env = {**os.environ, "MCPSQUEEZE_SOCKET": str(tmp_path / "none.sock")}
    done = subprocess.run([str(path), "--help"], env=env, capture_output=True, text=True)
    assert done.returncode == 3 and "mcpsqueeze serve" in done.stderr
