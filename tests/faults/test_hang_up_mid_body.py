"""A client that hangs up halfway through its request body costs one plain log line in serve and in
wrap (either protocol path), never a ClientDisconnect traceback; the door goes on answering. The doors
run in this process (their log kept as their stderr)."""

from __future__ import annotations

import json
import socket
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path

import pytest
from http_doors import Door, head, read_response, serve_door_here, wrap_door_here

from rawclient import HTTP_INITIALIZE

DOORS: dict[str, tuple[Callable[..., AbstractContextManager[Door]], bool]] = {
    "wrap": (wrap_door_here, False),
    "wrap-2026-07-28": (wrap_door_here, True),
    "serve": (serve_door_here, False),
}


@pytest.mark.parametrize("name", sorted(DOORS))
def test_a_client_hanging_up_mid_body_is_one_plain_log_line(tmp_path: Path, name: str) -> None:
    open_door, stateless = DOORS[name]
    body = json.dumps(HTTP_INITIALIZE).encode()
    with open_door(tmp_path) as door:
        for _ in range(3):
            with socket.create_connection((door.host, door.port)) as sock:
                sock.sendall(head(door, length=len(body) * 10, stateless=stateless) + body)
        with socket.create_connection((door.host, door.port)) as sock:  # the door still answers (as its API
            sock.sendall(head(door, length=len(body), stateless=stateless) + body)  # answers this body)
            status = read_response(sock).split(b" ", 2)[1]
            assert status in (b"200", b"400"), status
    hung_up = [line for line in door.log.splitlines() if "hung up" in line]
    assert len(hung_up) == 3, door.log
    assert hung_up[0].startswith("mcpsqueeze: a client hung up before its whole request arrived"), hung_up
    assert "Traceback" not in door.log and "ClientDisconnect" not in door.log, door.log
