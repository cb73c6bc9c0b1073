"""`wrap`'s HTTP frontend refuses before it spends: no backend for a refused request, a session cap,
and a token for any bind beyond loopback. wrap runs in this process (memwrap.HttpWrap, real sockets); the
backends it opens are counted where every door opens one (memwrap.backends_opened)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx2
import pytest

from memwrap import HttpWrap, backends_opened, run_cli
from rawclient import HTTP_ACCEPT as ACCEPT
from rawclient import HTTP_INITIALIZE as INITIALIZE
from rawclient import HTTP_PING as PING
from rawclient import demo_server


@contextmanager
def _proxy_in_process(tmp_path: Path, target: list[str], *extra: str) -> Iterator[str]:
    """wrap's HTTP frontend in front of `target`: its URL; stopped as SIGTERM would."""
    with HttpWrap(["--recovery-dir", str(tmp_path / "rec"), *extra], target) as wrap:
        yield wrap.url


def _opened() -> int:
    return backends_opened(demo_server())


@pytest.mark.anyio
async def test_refused_host_origin_and_content_type_start_no_backend(tmp_path: Path) -> None:
    before = _opened()
    with _proxy_in_process(tmp_path, demo_server()) as url:
        async with httpx2.AsyncClient(timeout=30) as http:
            host = await http.post(url, headers={**ACCEPT, "Host": "evil.example.com"}, json=INITIALIZE)
            origin = await http.post(
                url, headers={**ACCEPT, "Origin": "http://evil.example.com"}, json=INITIALIZE
            )
            plain = await http.post(
                url,
                headers={**ACCEPT, "Content-Type": "text/plain", "Origin": "http://evil.example.com"},
                content=b'{"jsonrpc":"2.0","id":1,"method":"initialize"}',
            )
            assert (host.status_code, origin.status_code, plain.status_code) == (421, 403, 400)
            refused = [host.status_code, origin.status_code, plain.status_code]
            for i in range(17):  # 20 refused in all: none may leave a backend behind
                kind = [{"Host": "evil.example.com"}, {"Origin": "http://evil.example.com"}][i % 2]
                refused.append(
                    (await http.post(url, headers={**ACCEPT, **kind}, json=INITIALIZE)).status_code
                )
            assert len(refused) == 20 and all(code in (400, 403, 421) for code in refused)
            ok = await http.post(url, headers=ACCEPT, json=INITIALIZE)
            assert ok.status_code == 200 and "mcpsqueeze-demo" in ok.text
    assert _opened() - before == 1  # only the accepted session got a backend


@pytest.mark.anyio
async def test_at_max_sessions_the_session_idle_longest_makes_room(tmp_path: Path) -> None:
    before = _opened()
    with _proxy_in_process(tmp_path, demo_server(), "--max-sessions", "2") as url:
        async with httpx2.AsyncClient(timeout=30) as http:
            first = await http.post(url, headers=ACCEPT, json=INITIALIZE)
            second = await http.post(url, headers=ACCEPT, json=INITIALIZE)
            third = await http.post(url, headers=ACCEPT, json=INITIALIZE)
            assert (first.status_code, second.status_code, third.status_code) == (200, 200, 200)
            # The first (idle longest) was ended: its id is unknown now, as the spec's 404 says.
            gone = await http.post(
                url, headers={**ACCEPT, "mcp-session-id": first.headers["mcp-session-id"]}, json=PING
            )
            assert gone.status_code == 404
            kept = await http.post(
                url, headers={**ACCEPT, "mcp-session-id": second.headers["mcp-session-id"]}, json=PING
            )
            assert kept.status_code == 200
    assert _opened() - before == 3


@pytest.mark.anyio
async def test_sessions_beyond_max_sessions_are_refused_when_every_session_is_busy(tmp_path: Path) -> None:
    before = _opened()
    with _proxy_in_process(tmp_path, demo_server(), "--max-sessions", "2") as url:
        async with httpx2.AsyncClient(timeout=30) as http:
            ids = []
            for _ in range(2):
                opened = await http.post(url, headers=ACCEPT, json=INITIALIZE)
                assert opened.status_code == 200
                ids.append(opened.headers["mcp-session-id"])
            sse = {"Accept": "text/event-stream", "mcp-protocol-version": "2025-11-25"}
            async with (
                http.stream("GET", url, headers={**sse, "mcp-session-id": ids[0]}) as one,
                http.stream("GET", url, headers={**sse, "mcp-session-id": ids[1]}) as two,
            ):
                assert one.status_code == two.status_code == 200  # both sessions hold an open stream
                third = await http.post(url, headers=ACCEPT, json=INITIALIZE)
                assert third.status_code == 503
                message = third.json()["error"]["message"]
                assert "2 sessions" in message and "--max-sessions" in message
            # Streams closed: the idle-longest session makes room (its end runs in the background).
            statuses = []
            while not statuses or (statuses[-1] == 503 and len(statuses) < 500):
                statuses.append((await http.post(url, headers=ACCEPT, json=INITIALIZE)).status_code)
            assert statuses[-1] == 200, statuses
    assert _opened() - before == 3


def test_a_non_loopback_bind_without_a_token_file_is_refused_before_binding(tmp_path: Path) -> None:
    done = run_cli("wrap", "--transport", "streamable-http", "--host", "0.0.0.0", "--port", "0", "--", "true")
    assert done.returncode == 2, done.stderr
    assert "--token-file" in done.stderr and "0.0.0.0" in done.stderr
    assert "serving" not in done.stderr


def test_the_host_and_origin_checks_stay_on_for_a_non_loopback_bind() -> None:
    from mcpsqueeze.transports._http_limits import RequestGuard

    wide = RequestGuard.for_bind("0.0.0.0")
    assert not wide.allows_host("evil.example.com", "192.0.2.7")
    assert not wide.allows_host("evil.example.com:8765", "192.0.2.7")
    assert wide.allows_host("192.0.2.7:8765", "192.0.2.7")  # the address the request arrived on
    assert wide.allows_host("localhost:8765", "127.0.0.1")
    lan = RequestGuard.for_bind("192.0.2.7")
    assert lan.allows_host("192.0.2.7:1234", "192.0.2.7")
    assert not lan.allows_host("198.51.100.1", "192.0.2.7")
    headers = {"content-type": "application/json", "host": "192.0.2.7:1", "origin": "http://evil.example.com"}
    assert lan.refusal({"server": ("192.0.2.7", 1)}, "POST", headers) == (403, "Invalid Origin header")
    loop = RequestGuard.for_bind("127.0.0.1")
    assert loop.allows_host("[::1]:9", "::1") and not loop.allows_host(None, "127.0.0.1")


def test_a_symlinked_token_file_is_refused_before_the_recovery_dir_is_made(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.write_text("z" * 64)
    real.chmod(0o600)
    auth = tmp_path / "auth"
    auth.mkdir(mode=0o700)
    (auth / "token").symlink_to(real)
    options = ["--transport", "streamable-http", "--port", "0", "--recovery-dir", str(tmp_path / "rec")]
    done = run_cli("wrap", *options, "--token-file", str(auth / "token"), "--", "true")
    assert done.returncode == 2, done.stderr
    assert "symlink" in done.stderr and "Traceback" not in done.stderr
    assert not (tmp_path / "rec").exists()
