"""A pre-registered client registered for `client_secret_post` can log in.

The authorization server (tests/proxy/oauth_server.py, the SDK's server auth, in a thread) lists both
`client_secret_post` and `client_secret_basic`; `--oauth-auth-method basic|post` chooses (default: what
the client's registration record says, else basic), and a 401 at the token endpoint is a clear error
naming the flags to check, exit 2 (a usage problem: the client's credentials or method), never a
traceback. `auth login` and wrap run in this process.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from memwrap import Completed, MemoryWrap, run_cli
from rawclient import oauth_server, text

CLIENT_ID, SECRET = "preregistered-app", "s3cret-of-the-app"


def _port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def callback_port() -> int:
    return _port()


@pytest.fixture
def post_server(callback_port: int) -> Iterator[str]:
    """The authorization server with one client pre-registered for client_secret_post, in a thread of
    this process (oauth_server.running)."""
    redirect = f"http://127.0.0.1:{callback_port}/callback"
    client = f"{CLIENT_ID},{SECRET},client_secret_post,{redirect}"
    with oauth_server().running(clients=[client]) as url:
        yield url


def _secret_file(tmp_path: Path) -> Path:
    directory = tmp_path / "secrets"
    directory.mkdir(mode=0o700)
    path = directory / "client-secret"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    os.write(fd, SECRET.encode() + b"\n")
    os.close(fd)
    return path


@pytest.fixture(autouse=True)
def oauth_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Tokens are stored in the test's own directory."""
    monkeypatch.setenv("MCPSQUEEZE_OAUTH_DIR", str(tmp_path / "oauth"))


def _login(url: str, tmp_path: Path, port: int, *extra: str) -> Completed:
    return run_cli(
        "auth",
        "login",
        url,
        "--port",
        str(port),
        "--fetch-authorize-url",
        "--oauth-client-id",
        CLIENT_ID,
        "--oauth-client-secret-file",
        str(
            _secret_file(tmp_path)
            if not (tmp_path / "secrets").exists()
            else tmp_path / "secrets/client-secret"
        ),
        *extra,
    )


def test_a_client_registered_for_post_logs_in_with_oauth_auth_method_post(
    post_server: str, tmp_path: Path, callback_port: int
) -> None:
    done = _login(post_server, tmp_path, callback_port, "--oauth-auth-method", "post")
    assert done.returncode == 0, done.stderr
    assert "logged in" in done.stderr and "Traceback" not in done.stderr
    options = [
        "--recovery-dir",
        str(tmp_path / "rec"),
        "--oauth-client-id",
        CLIENT_ID,
        "--oauth-client-secret-file",
        str(tmp_path / "secrets/client-secret"),
        "--oauth-auth-method",
        "post",
    ]
    with MemoryWrap(options, target=[post_server]) as client:
        client.initialize()
        assert text(client.call("whoami")) == "authorized"
        assert client.close() == 0


def test_the_wrong_method_is_a_clear_error_not_a_traceback(
    post_server: str, tmp_path: Path, callback_port: int
) -> None:
    done = _login(post_server, tmp_path, callback_port)  # default: basic, which this client may not use
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    assert len(done.stderr.splitlines()) <= 4, done.stderr
    assert "401" in done.stderr and "--oauth-auth-method" in done.stderr
    assert "client_secret_basic" in done.stderr


def test_an_unknown_method_is_refused_by_the_flag() -> None:
    done = run_cli("auth", "login", "https://e.test/mcp", "--oauth-auth-method", "jwt")
    assert done.returncode == 2 and "basic" in done.stderr and "post" in done.stderr
