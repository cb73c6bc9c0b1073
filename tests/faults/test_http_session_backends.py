"""Backend processes behind `wrap`'s HTTP sessions, counted from /proc: never more than `--max-sessions`
per caller under any mix of stalled, abandoned and concurrent requests; a backend starts only for a
request whose body has arrived, and ends with its session (within 2 s)."""

from __future__ import annotations

import concurrent.futures
import json
import os
import socket
import sys
import time
from pathlib import Path

import httpx2
import pytest
from http_doors import Door, head, wrap_door
from treemem import PeakSampler, cmdline, descendants

from rawclient import HTTP_ACCEPT, HTTP_INITIALIZE, HTTP_PING, wait_for

CAP = 2
ENDS_WITHIN = 2.0  # seconds a backend may outlive its session


def backends(pid: int) -> int:
    """The backend processes below `pid` (not `pid`, whose own command line names the backend)."""
    return sum(1 for p in descendants(pid) if p != pid and b"big_backend.py" in cmdline(p))


def _url(door: Door) -> str:
    return f"http://{door.host}:{door.port}{door.path}"


def _initialize(door: Door) -> httpx2.Response:
    return httpx2.post(_url(door), headers=HTTP_ACCEPT, json=HTTP_INITIALIZE, timeout=30)


def _half_sent(door: Door) -> socket.socket:
    """A session-less POST that announces a whole initialize but sends half of it, and stalls."""
    body = json.dumps(HTTP_INITIALIZE).encode()
    sock = socket.create_connection((door.host, door.port))
    sock.sendall(head(door, length=len(body)) + body[: len(body) // 2])
    return sock


def _watch(seconds: float) -> None:
    """Let the door act on what it was sent: an absence (no process started) can only be seen over time."""
    time.sleep(seconds)


def test_a_request_whose_body_never_arrives_starts_no_backend(tmp_path: Path) -> None:
    with wrap_door(tmp_path, "--max-sessions", str(CAP)) as door:
        pid = door.pid
        with PeakSampler(pid, measure=backends) as peak:
            stalled = [_half_sent(door) for _ in range(10)]
            _watch(1.0)
            assert peak.peak == 0
            assert _initialize(door).status_code == 200  # the stalled ones neither start nor block one
            for sock in stalled:
                sock.close()  # hung up mid-body
            _watch(1.0)
            assert backends(pid) == 1
        assert peak.peak == 1
        assert door.proc is not None and door.proc.poll() is None


def test_a_session_ended_to_make_room_ends_its_backend(tmp_path: Path) -> None:
    with wrap_door(tmp_path, "--max-sessions", str(CAP)) as door:
        pid = door.pid
        with PeakSampler(pid, measure=backends) as peak:
            sessions = []
            for _ in range(6):
                answer = _initialize(door)
                assert answer.status_code == 200, answer.text
                sessions.append(answer.headers["mcp-session-id"])
                wait_for(lambda: backends(pid) <= CAP, ENDS_WITHIN, "the ended session's backend to end")
            ended = httpx2.post(
                _url(door), headers={**HTTP_ACCEPT, "mcp-session-id": sessions[0]}, json=HTTP_PING, timeout=30
            )
            assert ended.status_code == 404
            assert backends(pid) == CAP
        assert peak.peak <= CAP
    assert "Traceback" not in door.log, door.log


def test_concurrent_initializes_at_the_cap_get_200_or_503_and_no_process_beyond_it(tmp_path: Path) -> None:
    with wrap_door(tmp_path, "--max-sessions", str(CAP)) as door:
        pid = door.pid
        with PeakSampler(pid, measure=backends) as peak, concurrent.futures.ThreadPoolExecutor(8) as pool:
            for _ in range(6):
                statuses = [r.status_code for r in pool.map(lambda _: _initialize(door), range(8))]
                assert set(statuses) <= {200, 503}, statuses
                assert 200 in statuses
            wait_for(lambda: backends(pid) <= CAP, ENDS_WITHIN, "the ended sessions' backends to end")
        assert peak.peak <= CAP


def test_stalled_abandoned_and_concurrent_clients_never_run_more_backends_than_the_cap(
    tmp_path: Path,
) -> None:
    """Each round: clients that stall mid-body, clients that open a session and vanish, and clients that
    open one, use it and DELETE it, all at once. Then every session is deleted: no backend is left."""

    def use_and_delete(_: int) -> int:
        answer = _initialize(door)
        if answer.status_code != 200:
            return answer.status_code
        sid = {"mcp-session-id": answer.headers["mcp-session-id"]}
        ping = httpx2.post(_url(door), headers={**HTTP_ACCEPT, **sid}, json=HTTP_PING, timeout=30)
        httpx2.delete(_url(door), headers={**HTTP_ACCEPT, **sid}, timeout=30)
        return ping.status_code

    def abandon(_: int) -> int:
        answer = _initialize(door)
        return answer.status_code

    with wrap_door(tmp_path, "--max-sessions", str(CAP)) as door:
        pid = door.pid
        with PeakSampler(pid, measure=backends) as peak, concurrent.futures.ThreadPoolExecutor(12) as pool:
            for _ in range(4):
                stalled = [_half_sent(door) for _ in range(4)]
                used = pool.map(use_and_delete, range(4))
                left = pool.map(abandon, range(4))
                statuses = [*used, *left]
                assert set(statuses) <= {200, 404, 503}, statuses  # 404: a ping after its session made room
                for sock in stalled:
                    sock.close()
            live = []
            for _ in range(CAP):  # the abandoned sessions make room for these, which are then deleted
                answer = _initialize(door)
                assert answer.status_code == 200, answer.text
                live.append(answer.headers["mcp-session-id"])
            for sid in live:
                httpx2.delete(_url(door), headers={**HTTP_ACCEPT, "mcp-session-id": sid}, timeout=30)
            wait_for(lambda: backends(pid) == 0, ENDS_WITHIN, "every deleted session's backend to end")
        assert peak.peak <= CAP
    assert "Traceback" not in door.log, door.log


HUNG = Path(__file__).parents[1] / "fixtures" / "hung_backend.py"  # never answers a call, ignores SIGTERM


def test_a_deleted_session_counts_under_the_cap_until_its_backend_is_gone(tmp_path: Path) -> None:
    """A backend that ignores SIGTERM takes its grace time to end after DELETE; a new session at the cap
    waits for it instead of running a second backend beside it."""

    def hung(pid: int) -> int:
        return sum(1 for p in descendants(pid) if p != pid and b"hung_backend.py" in cmdline(p))

    with wrap_door(tmp_path, "--max-sessions", "1", backend=(str(HUNG), str(tmp_path / "marker"))) as door:
        pid = door.pid
        with PeakSampler(pid, measure=hung) as peak:
            first = _initialize(door)
            assert first.status_code == 200, first.text
            sid = {"mcp-session-id": first.headers["mcp-session-id"]}
            assert httpx2.delete(_url(door), headers={**HTTP_ACCEPT, **sid}, timeout=30).status_code == 200
            second = _initialize(door)
            assert second.status_code == 200, second.text
            wait_for(lambda: hung(pid) == 1, ENDS_WITHIN, "the new session's backend")
        assert peak.peak == 1
    assert "Traceback" not in door.log, door.log


def _hung_backends() -> int:
    me = os.getpid()
    return sum(1 for p in descendants(me) if p != me and b"hung_backend.py" in cmdline(p))


@pytest.mark.parametrize("mid_call", [False, True], ids=["idle", "mid-call"])
def test_an_abandoned_sessions_backend_ends_on_its_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture, mid_call: bool
) -> None:
    """A client that vanishes without DELETE (idle, or hanging up in the middle of a call to a backend
    that never answers and ignores SIGTERM): its session ends after the idle time, and its backend
    within 2 s of that, with no request from anyone. (The idle time is 30 minutes; 1 s here.)"""
    import mcpsqueeze.transports._http_sessions as sessions_module
    from memwrap import HttpWrap

    idle = 1.0
    monkeypatch.setattr(sessions_module, "SESSION_IDLE_TIMEOUT", idle)
    marker = tmp_path / "called"
    with HttpWrap(
        ["--recovery-dir", str(tmp_path / "rec")], [sys.executable, str(HUNG), str(marker)]
    ) as door:
        answer = httpx2.post(door.url, headers=HTTP_ACCEPT, json=HTTP_INITIALIZE, timeout=30)
        assert answer.status_code == 200
        assert _hung_backends() == 1
        if mid_call:
            sid = {"mcp-session-id": answer.headers["mcp-session-id"]}
            call = {
                "jsonrpc": "2.0",
                "id": 5,
                "method": "tools/call",
                "params": {"name": "hang", "arguments": {}},
            }
            with (
                httpx2.Client(timeout=30) as client,
                client.stream("POST", door.url, headers={**HTTP_ACCEPT, **sid}, json=call),
            ):
                wait_for(marker.exists, 30, "the call to reach the backend")
            # the client hung up mid-call
        left = time.monotonic()
        wait_for(lambda: _hung_backends() == 0, idle + ENDS_WITHIN + 1.0, "the abandoned backend to end")
        assert time.monotonic() - left <= idle + ENDS_WITHIN + 1.0
    assert "Traceback" not in door.stderr, door.stderr
    assert not [r.getMessage() for r in caplog.records if r.exc_info], caplog.text  # the SDK's loggers too
