"""`install-commands`: one entry point per server, executable, secret-free, never clobbering others.
(The entry points run as commands: tests/bash/test_shim.py.)"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from mcpsqueeze._errors import UsageError
from mcpsqueeze.bash import install_commands


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


def test_install_commands_cli_warns_about_a_shell_word_server(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from mcpsqueeze.cli._main import main

    done = CliRunner().invoke(main, ["install-commands", str(tmp_path / "bin"), "--server", "test"])
    assert done.exit_code == 0, done.output
    assert str(tmp_path / "bin" / "mcp-test") in done.output
    assert "builtin" in done.output and "mcpsq test" in done.output
