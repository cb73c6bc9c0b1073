"""`serve`'s listening place is validated before anything is created: clear refusals, exit 2, fast."""

from __future__ import annotations

from pathlib import Path

from memwrap import Completed, run_cli
from rawclient import demo_server


def _serve(tmp_path: Path, *args: str) -> Completed:
    return run_cli(
        "serve", "--recovery-dir", str(tmp_path / "rec"), *args, "-n", "demo", "--", *demo_server()
    )


def test_listen_on_a_non_loopback_address_is_refused_before_a_token_file_exists(tmp_path: Path) -> None:
    token = tmp_path / "auth" / "token"
    done = _serve(tmp_path, "--listen", "0.0.0.0:0", "--token-file", str(token))
    assert done.returncode == 2, done.stderr
    assert "loopback" in done.stderr and "Traceback" not in done.stderr
    assert not token.exists() and not token.parent.exists()
    assert not (tmp_path / "rec").exists()


def test_a_symlinked_token_file_exits_2_without_a_traceback(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.write_text("y" * 64)
    real.chmod(0o600)
    auth = tmp_path / "auth"
    auth.mkdir(mode=0o700)
    (auth / "token").symlink_to(real)
    done = _serve(tmp_path, "--listen", "127.0.0.1:0", "--token-file", str(auth / "token"))
    assert done.returncode == 2, done.stderr
    assert "symlink" in done.stderr and "Traceback" not in done.stderr
    assert not (tmp_path / "rec").exists()  # refused before anything was created


def test_a_fifo_token_file_is_refused_and_serve_does_not_hang(tmp_path: Path) -> None:
    import os

    auth = tmp_path / "auth"
    auth.mkdir(mode=0o700)
    os.mkfifo(auth / "token", 0o600)
    done = _serve(tmp_path, "--listen", "127.0.0.1:0", "--token-file", str(auth / "token"))
    assert done.returncode == 2, done.stderr
    assert "regular 0600 file" in done.stderr
    assert not (tmp_path / "rec").exists()


def test_a_world_writable_socket_directory_is_named_as_the_socket_directory(tmp_path: Path) -> None:
    run = tmp_path / "run"
    run.mkdir()
    run.chmod(0o777)
    done = _serve(tmp_path, "--socket", str(run / "s.sock"))
    assert done.returncode == 2, done.stderr
    assert f"socket directory {run}" in done.stderr and "recovery directory" not in done.stderr
    assert not (run / "s.sock").exists()
    assert not (tmp_path / "rec").exists()
