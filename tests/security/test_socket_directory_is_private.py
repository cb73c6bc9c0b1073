"""serve's socket and token directory is 0700, as documented, with and without XDG_RUNTIME_DIR: every
directory made on the way is 0700 (the cache fallback `~/.cache/mcpsqueeze` is also the recovery
directory's parent, and holds the socket and the default token file); a looser default directory found
there is set to 0700, saying so; one the user chose is used, with a warning that says how to close it."""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from mcpsqueeze import _paths
from mcpsqueeze.recovery import ensure_private_dir
from memwrap import Serve
from rawclient import demo_server


def _mode(path: Path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A fresh HOME with no runtime dir (no XDG_RUNTIME_DIR, no /run/user/UID) and the usual umask;
    short, for the socket path's 108 bytes."""
    home = Path(tempfile.mkdtemp(prefix="home-", dir="/tmp"))
    monkeypatch.setenv("HOME", str(home))
    for name in ("XDG_RUNTIME_DIR", "XDG_CACHE_HOME", "MCPSQUEEZE_SOCKET", "MCPSQUEEZE_RECOVERY_DIR"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(_paths, "RUN_USER", str(tmp_path / "no-run-user"))
    old = os.umask(0o022)
    try:
        yield home
    finally:
        os.umask(old)
        shutil.rmtree(home, ignore_errors=True)


def _serve(*args: str) -> Serve:
    return Serve([*args, "-n", "demo", "--", *demo_server()])


def test_without_a_runtime_dir_the_socket_directory_in_the_cache_is_0700(home: Path) -> None:
    with _serve() as served:
        socket = Path(served.where)
    assert socket == home / ".cache" / "mcpsqueeze" / "session.sock"
    assert _mode(socket.parent) == 0o700 and _mode(home / ".cache") == 0o700
    assert _mode(socket.parent / "recovery") == 0o700


def test_with_xdg_runtime_dir_the_socket_directory_is_0700(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    runtime = home / "xdg"
    runtime.mkdir(mode=0o700)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    with _serve() as served:
        assert Path(served.where) == runtime / "mcpsqueeze" / "session.sock"
    assert _mode(runtime / "mcpsqueeze") == 0o700


def test_the_default_token_file_of_listen_is_in_a_0700_directory(home: Path) -> None:
    with _serve("--listen", "127.0.0.1:0"):
        token = home / ".cache" / "mcpsqueeze" / "token"
        assert _mode(token) == 0o600 and _mode(token.parent) == 0o700


def test_a_looser_default_directory_found_there_is_made_0700(
    home: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    directory = home / ".cache" / "mcpsqueeze"
    directory.mkdir(parents=True, mode=0o755)
    directory.chmod(0o755)
    with _serve():
        assert _mode(directory) == 0o700
    assert f"the socket directory {directory} was mode 0755; it is now 0700" in capfd.readouterr().err


def test_a_looser_directory_the_user_chose_is_used_with_a_warning(home: Path) -> None:
    shared = home / "shared"
    shared.mkdir(mode=0o755)
    shared.chmod(0o755)
    with _serve("--socket", str(shared / "s.sock")) as served:
        assert Path(served.where) == shared / "s.sock"
    assert _mode(shared) == 0o755  # the user's own directory is not changed behind their back
    assert f"the socket directory {shared} can be read by group or others (mode 0755)" in served.stderr
    assert f"chmod 700 {shared}" in served.stderr


def test_a_private_directory_is_made_0700_with_every_parent_it_needs(tmp_path: Path) -> None:
    old = os.umask(0o022)
    try:
        ensure_private_dir(tmp_path / "a" / "b" / "c")
    finally:
        os.umask(old)
    assert [_mode(tmp_path / p) for p in ("a", "a/b", "a/b/c")] == [0o700] * 3
