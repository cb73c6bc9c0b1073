"""A URL backend that refuses the Authorization header it is given (`-H Authorization=Bearer wrong`, or
a servers entry's `headers`): every door says so, naming the HTTP 401, and wrap exits 3 as it does
when no header is given and the backend wants an OAuth login, never -32603 "Server returned an error
response" to each request and exit 0. The backend is the OAuth fixture's protected MCP server, in a
thread of this process; the doors run in this process too."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from mcpsqueeze import BackendError, Client
from memwrap import Serve, run_cli
from rawclient import oauth_server
from serve.serve_api import api, write_token

WRONG = "Authorization=Bearer wrong"


@pytest.fixture(scope="module")
def protected() -> Iterator[str]:
    with oauth_server().running() as url:
        yield url


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """No stored OAuth tokens: a fresh OAuth directory."""
    monkeypatch.setenv("MCPSQUEEZE_OAUTH_DIR", str(tmp_path / "oauth"))
    return tmp_path


@pytest.mark.parametrize("transport", ["stdio", "streamable-http"])
@pytest.mark.parametrize("header", [(), ("-H", WRONG)], ids=["no-header", "wrong-header"])
def test_wrap_exits_3_naming_why_the_url_backend_refused_it(
    home: Path, protected: str, transport: str, header: tuple[str, ...]
) -> None:
    options = ["--transport", transport, "--port", "0", *header, "--recovery-dir", str(home / "rec")]
    done = run_cli("wrap", *options, "--", protected, stdin="")
    assert done.returncode == 3, done
    assert "Traceback" not in done.stderr
    if header:
        assert "refused the Authorization header it was given (HTTP 401" in done.stderr, done.stderr
    else:
        assert "requires an OAuth login" in done.stderr, done.stderr


def test_client_raises_a_backend_error_naming_the_401(home: Path, protected: str) -> None:
    servers = {"s": {"url": protected, "headers": {"Authorization": "Bearer wrong"}}}
    with (
        pytest.raises(BackendError, match=r"refused the Authorization header it was given \(HTTP 401"),
        Client(servers),
    ):
        pass


def test_serve_lists_the_backend_down_naming_the_401(home: Path, protected: str) -> None:
    auth = home / "auth"
    auth.mkdir(mode=0o700)
    token = write_token(auth / "token")
    args = [
        "--listen",
        "127.0.0.1:0",
        "--token-file",
        str(auth / "token"),
        "--recovery-dir",
        str(home / "rec"),
    ]
    with Serve([*args, "-H", WRONG, "-n", "s", "--", protected]) as served:
        status, body = api(served.where, token, "/v1/servers")
        called, refused = api(served.where, token, "/v1/call", {"server": "s", "tool": "t", "arguments": {}})
    assert status == 200 and body["servers"][0]["status"] == "down"
    assert "refused the Authorization header it was given (HTTP 401" in body["servers"][0]["error"]
    assert called == 502 and "(HTTP 401" in refused["error"]["message"]
    assert "Traceback" not in served.stderr
