"""An access token the server expired early is refreshed, whatever expires_at says: an authorization
server may stop accepting an access token before the stored `expires_at` while the refresh token is still
valid, so a 401 with a refresh token at hand refreshes once and retries the request; only when that fails
too is it "log in again" (exit 3).

The authorization server is tests/proxy/oauth_server.py (the SDK's server auth, run for real, in a
thread); `auth login` and wrap run in this process.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest

from memwrap import HttpClient, HttpWrap, MemoryWrap, run_cli
from rawclient import oauth_server, text


@pytest.fixture
def backend() -> Iterator[str]:
    """The authorization server, in a thread of this process (oauth_server.running)."""
    with oauth_server().running(token_ttl=3600) as url:
        yield url


def _base(url: str) -> str:
    return url.rsplit("/", 1)[0]


@pytest.fixture(autouse=True)
def oauth_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Tokens are stored in the test's own directory."""
    monkeypatch.setenv("MCPSQUEEZE_OAUTH_DIR", str(tmp_path / "oauth"))


def _login(url: str, tmp_path: Path) -> None:
    done = run_cli("auth", "login", "--fetch-authorize-url", url)
    assert done.returncode == 0, done.stderr


def test_a_token_the_server_expired_early_is_refreshed_at_start(backend: str, tmp_path: Path) -> None:
    _login(backend, tmp_path)
    token_file = next((tmp_path / "oauth").glob("*.json"))
    before = json.loads(token_file.read_text())
    assert before["expires_at"] > time.time() + 3000  # the client believes it is good for an hour
    httpx2.post(_base(backend) + "/test/expire", timeout=10).raise_for_status()  # the server says no now
    # wrap's HTTP frontend checks the backend's login before it serves, as wrap over stdio does
    with (
        HttpWrap(["--recovery-dir", str(tmp_path / "rec")], [backend]) as door,
        HttpClient(door.url) as client,
    ):
        assert httpx2.get(_base(backend) + "/test/counts", timeout=10).json()["refresh"] == 1  # at start
        client.initialize()
        assert text(client.call("whoami")) == "authorized"
    after = json.loads(token_file.read_text())
    assert after["tokens"]["access_token"] != before["tokens"]["access_token"]
    assert httpx2.get(_base(backend) + "/test/counts", timeout=10).json()["refresh"] == 1


def test_a_token_expired_early_while_serving_is_refreshed_and_the_call_retried(
    backend: str, tmp_path: Path
) -> None:
    _login(backend, tmp_path)
    with MemoryWrap(["--recovery-dir", str(tmp_path / "rec")], target=[backend]) as client:
        client.initialize()
        assert text(client.call("whoami")) == "authorized"
        httpx2.post(_base(backend) + "/test/expire", timeout=10).raise_for_status()
        again = client.call("whoami")
        assert text(again) == "authorized", again
        assert client.close() == 0


def test_a_refresh_that_fails_too_is_still_log_in_again(backend: str, tmp_path: Path) -> None:
    _login(backend, tmp_path)
    httpx2.post(_base(backend) + "/test/revoke", timeout=10).raise_for_status()  # refresh token gone too
    done = run_cli("wrap", "--", backend)
    assert done.returncode == 3, done.stderr
    assert "expired or was revoked" in done.stderr and "Traceback" not in done.stderr
