"""OAuth 2.1 backends: `mcpsqueeze auth login` against a local authorization server, then `wrap -- URL`.

The authorization server is the SDK's server auth support (tests/proxy/oauth_server.py, served from a
thread of the test process): discovery, dynamic client registration, PKCE, refresh rotation. The door's
end-to-end tests spawn the CLI as a user runs it, the browser an HTTP client driving the printed authorize
URL and the loopback redirect: a login then a wrap session, and wrap authorizing again itself. The others
log in and run wrap in this process (`auth login --fetch-authorize-url`, memwrap).
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest

from memwrap import HttpWrap, MemoryWrap, run_cli
from rawclient import RawClient, cli, stop, text

SERVER = Path(__file__).with_name("oauth_server.py")


@pytest.fixture
def oauth_backend() -> Iterator[str]:
    """The authorization and MCP server, in a thread of this process (oauth_server.running)."""
    from oauth_server import running

    with running() as url:
        yield url


@pytest.fixture
def oauth_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """The tokens in the test's own directory: for spawned commands, and for this process's."""
    monkeypatch.setenv("MCPSQUEEZE_OAUTH_DIR", str(tmp_path / "oauth"))
    return {**os.environ}


def _login_here(url: str) -> None:
    done = run_cli("auth", "login", "--fetch-authorize-url", url)
    assert done.returncode == 0, done.stderr


def _login(url: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    proc = subprocess.Popen(cli("auth", "login", url), stderr=subprocess.PIPE, text=True, env=env)
    assert proc.stderr is not None
    seen = []
    authorize = None
    for line in proc.stderr:
        seen.append(line)
        if line.startswith("http"):
            authorize = line.strip()
            break
    assert authorize is not None, "".join(seen)
    # the "browser": the authorization server approves at once and redirects to our loopback port
    approved = httpx2.get(authorize, follow_redirects=False, timeout=10)
    assert approved.status_code == 302
    landing = httpx2.get(approved.headers["location"], timeout=10)
    assert landing.status_code == 200 and "login complete" in landing.text
    rest = proc.stderr.read()
    code = proc.wait(30)
    return subprocess.CompletedProcess(proc.args, code, "", "".join(seen) + rest)


def _counts(url: str) -> dict[str, int]:
    counts: dict[str, int] = httpx2.get(url.rsplit("/", 1)[0] + "/test/counts", timeout=10).json()
    return counts


def _admin(url: str, what: str) -> None:
    httpx2.post(url.rsplit("/", 1)[0] + f"/test/{what}", timeout=10).raise_for_status()


def _session(
    url: str, env: dict[str, str], tmp_path: Path
) -> tuple[dict[str, Any], dict[str, Any], int, str]:
    with RawClient(cli("wrap", "--recovery-dir", str(tmp_path / "rec"), "--", url), env=env) as client:
        client.initialize()
        who = client.call("whoami")
        big = client.call("big_listing", {"n": 2000})
        code = client.close()
        return who, big, code, client.stderr


def test_login_stores_tokens_privately_and_wrap_uses_them_with_shrinking(
    oauth_backend: str, oauth_env: dict[str, str], tmp_path: Path
) -> None:
    done = _login(oauth_backend, oauth_env)
    assert done.returncode == 0, done.stderr
    files = list((tmp_path / "oauth").glob("*.json"))
    assert len(files) == 1
    assert stat.S_IMODE(files[0].stat().st_mode) == 0o600
    assert stat.S_IMODE(files[0].parent.stat().st_mode) == 0o700
    stored = json.loads(files[0].read_text())
    assert stored["tokens"]["access_token"] and stored["tokens"]["refresh_token"]
    assert _counts(oauth_backend)["register"] == 1  # dynamic client registration

    who, big, code, _ = _session(oauth_backend, oauth_env, tmp_path)
    assert text(who) == "authorized"
    assert "truncation" in text(big)  # the OAuth backend's big result is shrunk as any other
    assert code == 0


def test_an_expired_access_token_is_refreshed_and_the_new_one_saved(
    oauth_backend: str, oauth_env: dict[str, str], tmp_path: Path
) -> None:
    _login_here(oauth_backend)
    token_file = next((tmp_path / "oauth").glob("*.json"))
    before = json.loads(token_file.read_text())
    _admin(oauth_backend, "expire")  # the server says no to the current access token from now on
    stored = {**before, "expires_at": 1.0}  # and the client knows it expired (as after a restart, later)
    token_file.write_text(json.dumps(stored))
    with MemoryWrap(["--recovery-dir", str(tmp_path / "rec")], target=[oauth_backend]) as client:
        client.initialize()
        who = client.call("whoami")
        code = client.close()
    after = json.loads(token_file.read_text())
    assert text(who) == "authorized" and code == 0
    assert _counts(oauth_backend)["refresh"] >= 1
    assert after["tokens"]["access_token"] != before["tokens"]["access_token"]
    assert after["tokens"]["refresh_token"] != before["tokens"]["refresh_token"]  # rotated
    assert stat.S_IMODE(token_file.stat().st_mode) == 0o600


def test_a_revoked_token_is_a_clear_error_naming_the_login_command(
    oauth_backend: str, oauth_env: dict[str, str], tmp_path: Path
) -> None:
    _login_here(oauth_backend)
    _admin(oauth_backend, "revoke")
    done = run_cli("wrap", "--", oauth_backend)
    assert done.returncode == 3
    assert f"mcpsqueeze auth login {oauth_backend}" in done.stderr
    assert "expired or was revoked" in done.stderr
    assert "Traceback" not in done.stderr


def test_without_a_login_wrap_says_to_log_in_and_auth_clear_forgets_the_tokens(
    oauth_backend: str, oauth_env: dict[str, str], tmp_path: Path
) -> None:
    done = run_cli("wrap", "--", oauth_backend)
    assert done.returncode == 3
    assert "requires an OAuth login" in done.stderr and "mcpsqueeze auth login" in done.stderr
    _login_here(oauth_backend)
    cleared = run_cli("auth", "clear", oauth_backend)
    assert cleared.returncode == 0 and "removed 1" in cleared.stderr
    assert list((tmp_path / "oauth").glob("*.json")) == []


@pytest.mark.anyio
async def test_a_token_revoked_while_serving_gives_the_2026_client_a_clear_error(
    oauth_backend: str, oauth_env: dict[str, str], tmp_path: Path
) -> None:
    import mcp_types as types
    from mcp import Client
    from mcp.shared.exceptions import MCPError

    await anyio.to_thread.run_sync(_login_here, oauth_backend)  # (the command runs its own event loop)
    with HttpWrap(["--recovery-dir", str(tmp_path / "r")], [oauth_backend]) as door:
        url = door.url
        request = types.CallToolRequest(params=types.CallToolRequestParams(name="whoami", arguments={}))
        async with Client(url, mode="2026-07-28") as client:
            first = await client.session.send_request(request, types.CallToolResult)
            _admin(oauth_backend, "revoke")
            with pytest.raises(MCPError) as refused:
                await client.session.send_request(request, types.CallToolResult)
        assert first.content[0].text == "authorized"  # type: ignore[union-attr]
        assert f"mcpsqueeze auth login {oauth_backend}" in str(refused.value)
        assert door.poll() is None  # the proxy keeps serving


def test_with_oauth_login_prompt_the_proxy_authorizes_again_itself_and_serves(
    oauth_backend: str, oauth_env: dict[str, str], tmp_path: Path
) -> None:
    assert _login(oauth_backend, oauth_env).returncode == 0
    _admin(oauth_backend, "revoke")  # neither the access nor the refresh token works any more
    argv = cli(
        "wrap", "--oauth-login", "prompt", "--recovery-dir", str(tmp_path / "rec"), "--", oauth_backend
    )
    proc = subprocess.Popen(
        argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=oauth_env
    )
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    try:
        seen = []
        for line in proc.stderr:  # the proxy prints the authorization URL and waits for the redirect
            seen.append(line)
            if line.startswith("http"):
                break
        assert seen and seen[-1].startswith("http"), "".join(seen)
        approved = httpx2.get(seen[-1].strip(), follow_redirects=False, timeout=10)
        landing = httpx2.get(approved.headers["location"], timeout=10)
        assert landing.status_code == 200 and "login complete" in landing.text
        init = {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"},
        }
        for message in (
            {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": init},
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "tools/call",
                "params": {"name": "whoami", "arguments": {}},
            },
        ):
            proc.stdin.write(json.dumps(message) + "\n")
        proc.stdin.flush()
        answers = [json.loads(proc.stdout.readline()) for _ in range(2)]
        assert answers[1]["id"] == 2 and text(answers[1]["result"]) == "authorized"
        assert _counts(oauth_backend)["register"] == 1  # the client registered at login was reused
    finally:
        proc.stdin.close()
        stop(proc)
