"""Issue 23 item 15: every HTTP door refuses a request body over `--max-body` (default 16 MiB) with 413 and
a message naming the knob, and holds none of it: a 400 MB body, announced or chunked, leaves the door's
memory flat. wrap's streamable HTTP (both protocol paths: sessions, and 2026-07-28 stateless requests)
and serve's HTTP API, each run for real."""

from __future__ import annotations

import json
import socket
import threading
from pathlib import Path

import pytest
from http_doors import Door, head, read_response, serve_door, wrap_door
from treemem import PeakSampler, rss

MB = 1 << 20
# The door may hold up to --max-body (16 MiB) of a chunked body before it knows it is too big, and its app
# joins what it read once: flat means a bound of a few times that, whatever the body's size (before the
# limit, 400 MB took wrap from 70 to ~870 MB).
FLAT = 64 * MB
INITIALIZE = json.dumps(
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t"}},
    }
).encode()


def _warm(door: Door, body: bytes = INITIALIZE, stateless: bool = False) -> bytes:
    """One ordinary request first: what a door imports and starts on its first request is not growth."""
    with socket.create_connection((door.host, door.port)) as sock:
        sock.sendall(head(door, length=len(body), stateless=stateless) + body)
        return read_response(sock)


def _send_body(door: Door, total: int, *, announce: bool, stateless: bool = False) -> tuple[bytes, int]:
    """POST `total` bytes of body (a Content-Length, or chunked), 1 MiB at a time, while the door's RSS
    is sampled (the door's own process: a session's backend is not the door); (the response, the door's
    peak RSS growth in bytes)."""
    _warm(door, stateless=stateless)
    idle = rss(door.pid)
    answer: list[bytes] = []
    with (
        socket.create_connection((door.host, door.port)) as sock,
        PeakSampler(door.pid, tree=False) as sampler,
    ):
        sock.sendall(
            head(door, length=total if announce else None, chunked=not announce, stateless=stateless)
        )
        reader = threading.Thread(target=lambda: answer.append(read_response(sock, 60)))
        reader.start()
        piece = b"x" * MB
        frame = f"{MB:x}\r\n".encode() + piece + b"\r\n"
        try:
            for _ in range(total // MB):
                sock.sendall(piece if announce else frame)
                if answer:
                    break
        except OSError:
            pass  # the door closed the connection after refusing
        reader.join(60)
    return (answer[0] if answer else b""), sampler.peak - idle


def _status(response: bytes) -> int:
    return int(response.split(b" ", 2)[1]) if response.startswith(b"HTTP/1.1 ") else 0


def _body(response: bytes) -> object:
    return json.loads(response.partition(b"\r\n\r\n")[2])


@pytest.mark.parametrize("stateless", [False, True], ids=["session", "stateless"])
@pytest.mark.parametrize("announce", [True, False], ids=["content-length", "chunked"])
def test_23_15_wrap_refuses_a_400_mb_body_with_413_and_stays_flat(
    tmp_path: Path, announce: bool, stateless: bool
) -> None:
    with wrap_door(tmp_path) as door:
        response, grown = _send_body(door, 400 * MB, announce=announce, stateless=stateless)
    assert _status(response) == 413, response[:300]
    body = _body(response)
    assert isinstance(body, dict) and "--max-body" in body["error"]["message"]
    assert grown < FLAT, f"wrap grew {grown / MB:.0f} MiB"


@pytest.mark.parametrize("announce", [True, False], ids=["content-length", "chunked"])
def test_23_15_serve_refuses_a_400_mb_body_with_413_and_stays_flat(tmp_path: Path, announce: bool) -> None:
    with serve_door(tmp_path) as door:
        response, grown = _send_body(door, 400 * MB, announce=announce)
    assert _status(response) == 413, response[:300]
    body = _body(response)
    assert isinstance(body, dict) and body["error"]["code"] == "too_large"
    assert "--max-body" in body["error"]["message"]
    assert grown < FLAT, f"serve grew {grown / MB:.0f} MiB"


def test_23_15_max_body_sets_the_bound_and_smaller_requests_still_work(tmp_path: Path) -> None:
    initialize = INITIALIZE
    with wrap_door(tmp_path, "--max-body", "1K") as door:
        with socket.create_connection((door.host, door.port)) as sock:
            sock.sendall(head(door, length=len(initialize)) + initialize)
            ok = read_response(sock)
        padded = initialize[:-1] + b', "pad": "' + b"p" * 2000 + b'"}'
        with socket.create_connection((door.host, door.port)) as sock:
            sock.sendall(head(door, length=len(padded)) + padded)
            refused = read_response(sock)
    assert _status(ok) == 200, ok[:300]
    assert _status(refused) == 413 and b"1024 bytes" in refused, refused[:300]
