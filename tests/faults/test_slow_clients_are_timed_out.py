"""Slow clients are timed out. Hundreds of connections that send half a request head (and never the rest)
are closed by the door within its head timeout (`HEAD_TIMEOUT`, 10 s, documented in docs/security.md), and
the descriptors they held are given back: wrap's streamable HTTP and serve's API, run in this process (the
descriptors counted are this process's, less the clients' own)."""

from __future__ import annotations

import contextlib
import socket
import time
from pathlib import Path

import pytest
from http_doors import Door, open_fds, serve_door_here, wrap_door_here

from mcpsqueeze.transports._http_limits import HEAD_TIMEOUT

CONNECTIONS = 300
MARGIN = 8.0  # seconds beyond the head timeout for a busy machine to close them all


def _half_heads(door: Door) -> list[socket.socket]:
    socks = []
    for _ in range(CONNECTIONS):
        sock = socket.create_connection((door.host, door.port))
        sock.sendall(f"POST {door.path} HTTP/1.1\r\nHost: {door.host}:{door.port}\r\nContent-Ty".encode())
        sock.setblocking(False)
        socks.append(sock)
    return socks


def _closed_by_peer(sock: socket.socket) -> bool:
    try:
        return sock.recv(4096) == b""
    except BlockingIOError:
        return False
    except OSError:
        return True


def _all_closed_within(socks: list[socket.socket], seconds: float) -> tuple[int, float]:
    """(connections still open after `seconds`, when the last one closed)."""
    start = time.monotonic()
    open_ = list(socks)
    while open_ and time.monotonic() - start < seconds:
        open_ = [s for s in open_ if not _closed_by_peer(s)]
        time.sleep(0.1)
    return len(open_), time.monotonic() - start


@pytest.mark.parametrize("door_of", [wrap_door_here, serve_door_here], ids=["wrap", "serve"])
def test_connections_sending_half_a_head_are_closed_within_the_head_timeout(
    tmp_path: Path, door_of: object
) -> None:
    with door_of(tmp_path) as door:  # type: ignore[operator]
        before = open_fds(door.pid)
        socks = _half_heads(door)
        try:
            left, took = _all_closed_within(socks, HEAD_TIMEOUT + MARGIN)
            after = open_fds(door.pid) - len(socks)  # the clients' sockets are this process's too
        finally:
            for sock in socks:
                with contextlib.suppress(OSError):
                    sock.close()
    assert left == 0, f"{left} of {CONNECTIONS} half-sent requests still open after {took:.1f} s"
    assert after <= before + 5, (before, after)
