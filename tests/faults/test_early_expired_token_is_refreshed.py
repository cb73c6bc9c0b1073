"""Issue 23 item 21: an access token the server expired early is refreshed, whatever expires_at says.

Before, `wrap` exited 3 ("expired or was revoked") when the authorization server stopped accepting the
access token before the stored `expires_at`, though the refresh token was still valid: the client only
refreshed when its own clock said the token had expired. Now a 401 with a refresh token at hand refreshes
once and retries the request; only when that fails too is it "log in again".

The authorization server is tests/proxy/oauth_server.py (the SDK's server auth, run for real).
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest

from rawclient import RawClient, cli, oauth_server, text


@pytest.fixture
def backend() -> Iterator[str]:
    """The authorization server, in a thread of this process (oauth_server.running)."""
    with oauth_server().running(token_ttl=3600) as url:
        yield url


def _base(url: str) -> str:
    return url.rsplit("/", 1)[0]


def _env(tmp_path: Path) -> dict[str, str]:
    return {**os.environ, "MCPSQUEEZE_OAUTH_DIR": str(tmp_path / "oauth")}


def _login(url: str, tmp_path: Path) -> None:
    done = subprocess.run(
        cli("auth", "login", "--fetch-authorize-url", url),
        capture_output=True,
        text=True,
        env=_env(tmp_path),
        timeout=90,
    )
    assert done.returncode == 0, done.stderr


def test_23_21_a_token_the_server_expired_early_is_refreshed_at_start(backend: str, tmp_path: Path) -> None:
    _login(backend, tmp_path)
    token_file = next((tmp_path / "oauth").glob("*.json"))
    before = json.loads(token_file.read_text())
    assert before["expires_at"] > time.time() + 3000  # the client believes it is good for an hour
    httpx2.post(_base(backend) + "/test/expire", timeout=10).raise_for_status()  # the server says no now
    argv = cli("wrap", "--recovery-dir", str(tmp_path / "rec"), "--", backend)
    with RawClient(argv, env=_env(tmp_path)) as client:
        client.initialize()
        assert text(client.call("whoami")) == "authorized"
        assert client.close() == 0
    after = json.loads(token_file.read_text())
    assert after["tokens"]["access_token"] != before["tokens"]["access_token"]
    assert httpx2.get(_base(backend) + "/test/counts", timeout=10).json()["refresh"] == 1


def test_23_21_a_token_expired_early_while_serving_is_refreshed_and_the_call_retried(
    backend: str, tmp_path: Path
) -> None:
    _login(backend, tmp_path)
    argv = cli("wrap", "--recovery-dir", str(tmp_path / "rec"), "--", backend)
    with RawClient(argv, env=_env(tmp_path)) as client:
        client.initialize()
        assert text(client.call("whoami")) == "authorized"
        httpx2.post(_base(backend) + "/test/expire", timeout=10).raise_for_status()
        again = client.call("whoami")
        assert text(again) == "authorized", again
        assert client.close() == 0


def test_23_21_a_refresh_that_fails_too_is_still_log_in_again(backend: str, tmp_path: Path) -> None:
    _login(backend, tmp_path)
    httpx2.post(_base(backend) + "/test/revoke", timeout=10).raise_for_status()  # refresh token gone too
    done = subprocess.run(
        cli("wrap", "--", backend), capture_output=True, text=True, env=_env(tmp_path), timeout=60
    )
    assert done.returncode == 3, done.stderr
    assert "expired or was revoked" in done.stderr and "Traceback" not in done.stderr
