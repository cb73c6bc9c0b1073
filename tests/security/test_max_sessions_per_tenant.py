"""With named tenants, one tenant's sessions never end another tenant's session.

`--max-sessions` is a cap per principal: at the cap, the session idle longest *of the same caller* is
ended to make room. A tenant opening many sessions ends only its own idle ones.
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path

import httpx2
import pytest

from memwrap import HttpWrap
from rawclient import HTTP_ACCEPT as ACCEPT
from rawclient import HTTP_INITIALIZE as INITIALIZE
from rawclient import HTTP_PING as PING
from rawclient import demo_server


def _tokens(tmp_path: Path) -> tuple[Path, str, str]:
    directory = tmp_path / "secret"
    directory.mkdir(mode=0o700)
    a, b = secrets.token_hex(32), secrets.token_hex(32)
    path = directory / "tokens"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    os.write(fd, f"alice:{a}\nbob:{b}\n".encode())
    os.close(fd)
    return path, a, b


@pytest.mark.anyio
async def test_one_tenant_opening_sessions_never_ends_another_tenants_session(tmp_path: Path) -> None:
    token_file, alice, bob = _tokens(tmp_path)
    as_alice = {**ACCEPT, "Authorization": f"Bearer {alice}"}
    as_bob = {**ACCEPT, "Authorization": f"Bearer {bob}"}
    options = [
        "--recovery-dir",
        str(tmp_path / "rec"),
        "--token-file",
        str(token_file),
        "--max-sessions",
        "2",
    ]
    with HttpWrap(options, demo_server()) as door:
        url = door.url
        async with httpx2.AsyncClient(timeout=30) as http:
            a1 = await http.post(url, headers=as_alice, json=INITIALIZE)
            assert a1.status_code == 200
            a_sid = a1.headers["mcp-session-id"]
            b1 = await http.post(url, headers=as_bob, json=INITIALIZE)
            b2 = await http.post(url, headers=as_bob, json=INITIALIZE)
            b3 = await http.post(url, headers=as_bob, json=INITIALIZE)
            assert (b1.status_code, b2.status_code, b3.status_code) == (200, 200, 200)
            # Alice's idle session is still hers, though it is the idlest of all.
            kept = await http.post(url, headers={**as_alice, "mcp-session-id": a_sid}, json=PING)
            assert kept.status_code == 200, kept.text
            # Bob's own idlest session made room for his third.
            gone = await http.post(
                url, headers={**as_bob, "mcp-session-id": b1.headers["mcp-session-id"]}, json=PING
            )
            assert gone.status_code == 404
            still = await http.post(
                url, headers={**as_bob, "mcp-session-id": b3.headers["mcp-session-id"]}, json=PING
            )
            assert still.status_code == 200
