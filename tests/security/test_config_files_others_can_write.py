"""A config file another user could have written is refused, never run.

`serve` runs the commands a config file's `[mcpServers]` names, so a config file (or a servers JSON) that
group or others can write, or that sits in a directory they can write (not sticky), is refused before
anything is read or started: exit 2, and the message says how to fix it. The same check as the token
file's (`mcpsqueeze._trusted`). A sticky shared directory (like /tmp) holding a file of ours is fine.
"""

from __future__ import annotations

import json
import os
import shlex
import sys
from pathlib import Path

import pytest

from mcpsqueeze._errors import UsageError
from memwrap import Completed, run_cli


def _env(tmp_path: Path) -> dict[str, str | None]:
    return {"XDG_CONFIG_HOME": str(tmp_path / "xdg"), "MCPSQUEEZE_CONFIG": None}


def _backend(marker: Path) -> list[str]:
    """The demo server, started through a shell that first leaves `marker` behind (proof it ran)."""
    return [
        "sh",
        "-c",
        f"touch {shlex.quote(str(marker))}; exec {shlex.quote(sys.executable)} -m mcpsqueeze.demo.server",
    ]


def _toml(directory: Path, marker: Path, mode: int) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    command, *args = _backend(marker)
    path = directory / "config.toml"
    path.write_text(f"[mcpServers.demo]\ncommand = {json.dumps(command)}\nargs = {json.dumps(args)}\n")
    path.chmod(mode)
    return path


def _serve(tmp_path: Path, *args: str) -> Completed:
    socket = ("--socket", str(tmp_path / "s.sock"))
    return run_cli("serve", "--recovery-dir", str(tmp_path / "rec"), *socket, *args, env=_env(tmp_path))


def test_a_world_writable_config_file_is_refused_and_its_servers_never_start(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    config = _toml(tmp_path / "conf", marker, 0o666)
    done = _serve(tmp_path, "--config", str(config))
    assert done.returncode == 2, done.stderr
    assert "group or others" in done.stderr and "chmod go-w" in done.stderr
    assert "Traceback" not in done.stderr
    assert not marker.exists()


def test_a_config_file_in_a_directory_others_can_write_is_refused(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    directory = tmp_path / "open"
    config = _toml(directory, marker, 0o644)
    directory.chmod(0o777)
    done = _serve(tmp_path, "--config", str(config))
    assert done.returncode == 2, done.stderr
    assert str(directory) in done.stderr and "replace" in done.stderr
    assert not marker.exists()


def test_a_servers_json_others_can_write_is_refused_by_serve_and_by_the_client(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    command, *args = _backend(marker)
    servers = tmp_path / "servers.json"
    servers.write_text(json.dumps({"mcpServers": {"demo": {"command": command, "args": args}}}))
    servers.chmod(0o646)
    for how in ("--servers", "--config"):
        done = _serve(tmp_path, how, str(servers))
        assert done.returncode == 2, (how, done.stderr)
        assert "chmod go-w" in done.stderr, how
    from mcpsqueeze import Client

    with pytest.raises(UsageError, match="group or others"):
        Client(servers)
    assert not marker.exists()


def test_wrap_refuses_such_a_config_file_too(tmp_path: Path) -> None:
    config = tmp_path / "settings.toml"
    config.write_text("[defaults]\nbudget = 5000\n")
    config.chmod(0o662)
    done = run_cli("wrap", "--config", str(config), "--", "true", env=_env(tmp_path))
    assert done.returncode == 2, done.stderr
    assert "chmod go-w" in done.stderr


def test_a_sticky_shared_directory_holding_our_own_file_is_fine(tmp_path: Path) -> None:
    from mcpsqueeze.settings import load_config

    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o1777)  # like /tmp: others may add files, never replace ours
    config = shared / "config.toml"
    config.write_text("[defaults]\nbudget = 5000\n")
    assert dict(load_config(config).defaults) == {"budget": 5000}
    config.chmod(0o666)
    with pytest.raises(UsageError, match="chmod go-w"):
        load_config(config)


def test_a_config_file_owned_by_another_user_is_refused(tmp_path: Path) -> None:
    from mcpsqueeze.settings import load_config

    if os.geteuid() != 0:
        pytest.skip("giving a file to another uid needs root")
    config = tmp_path / "config.toml"
    config.write_text("[defaults]\nbudget = 5000\n")
    os.chown(config, 65534, 65534)
    with pytest.raises(UsageError, match="owned by uid 65534"):
        load_config(config)
