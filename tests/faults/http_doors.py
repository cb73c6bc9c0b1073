"""The HTTP doors under test, for real: `wrap --transport streamable-http` and `serve --listen`, each
yielded once it listens, spawned with its process (`pid`, for /proc) or in this process (`*_here`:
memwrap's HttpWrap and Serve, whose log is kept the same way); and raw-socket requests that send exactly
what a hostile client sends."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from rawclient import cli, serve_ready

BACKEND = Path(__file__).parents[1] / "fixtures" / "big_backend.py"


@dataclass
class Door:
    host: str
    port: int
    path: str  # the route a request is posted to
    pid: int  # its process: its own, or this one for a door run here
    token: str = ""
    log: str = ""  # what the door wrote on stderr after its first lines, once it has stopped
    proc: subprocess.Popen[str] | None = None  # its process, when spawned


@contextlib.contextmanager
def wrap_door(tmp: Path, *extra: str, backend: tuple[str, ...] = (str(BACKEND),)) -> Iterator[Door]:
    argv = cli("wrap", "--transport", "streamable-http", "--port", "0", "--recovery-dir", str(tmp / "rec"))
    proc = subprocess.Popen(
        [*argv, *extra, "--", sys.executable, *backend],
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        text=True,
    )
    assert proc.stderr is not None
    door = Door("127.0.0.1", 0, "/mcp", proc.pid, proc=proc)
    try:
        line = proc.stderr.readline()
        match = re.search(r"http://127\.0\.0\.1:(\d+)/mcp", line)
        assert match, line
        door.port = int(match.group(1))
        yield door
    finally:
        proc.terminate()
        door.log = proc.communicate(timeout=30)[1]


@contextlib.contextmanager
def serve_door(tmp: Path, *extra: str) -> Iterator[Door]:
    token_file = tmp / "auth" / "token"
    token_file.parent.mkdir(mode=0o700)
    argv = cli(
        "serve", "--listen", "127.0.0.1:0", "--token-file", str(token_file),
        "--recovery-dir", str(tmp / "rec"), *extra, "-n", "big", "--", sys.executable, str(BACKEND),
    )  # fmt: skip
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    assert proc.stderr is not None
    door = Door("127.0.0.1", 0, "/v1/call", proc.pid, proc=proc)
    try:
        seen = serve_ready(proc)
        match = re.search(r"session ready on http://127\.0\.0\.1:(\d+)", seen)
        assert match, seen
        door.port, door.token = int(match.group(1)), token_file.read_text().strip()
        yield door
    finally:
        proc.send_signal(signal.SIGTERM)
        door.log = proc.communicate(timeout=30)[1]


@contextlib.contextmanager
def wrap_door_here(tmp: Path, *extra: str) -> Iterator[Door]:
    """`wrap_door`'s wrap, in this process."""
    from memwrap import HttpWrap

    with HttpWrap(["--recovery-dir", str(tmp / "rec"), *extra], [sys.executable, str(BACKEND)]) as wrap:
        door = Door("127.0.0.1", int(wrap.url.rsplit(":", 1)[1].split("/")[0]), "/mcp", os.getpid())
        yield door
    door.log = wrap.stderr


@contextlib.contextmanager
def serve_door_here(tmp: Path, *extra: str) -> Iterator[Door]:
    """`serve_door`'s serve, in this process."""
    from memwrap import Serve

    token_file = tmp / "auth" / "token"
    token_file.parent.mkdir(mode=0o700)
    args = [
        "--listen", "127.0.0.1:0", "--token-file", str(token_file),
        "--recovery-dir", str(tmp / "rec"), *extra, "-n", "big", "--", sys.executable, str(BACKEND),
    ]  # fmt: skip
    with Serve(args) as served:
        port = int(served.where.rsplit(":", 1)[1])
        door = Door("127.0.0.1", port, "/v1/call", os.getpid(), token_file.read_text().strip())
        yield door
    door.log = served.stderr


def head(door: Door, *, length: int | None = None, chunked: bool = False, stateless: bool = False) -> bytes:
    lines = [
        f"POST {door.path} HTTP/1.1",
        f"Host: {door.host}:{door.port}",
        "Content-Type: application/json",
        "Accept: application/json, text/event-stream",
    ]
    if door.token:
        lines.append(f"Authorization: Bearer {door.token}")
    if stateless:
        lines.append("MCP-Protocol-Version: 2026-07-28")
    if length is not None:
        lines.append(f"Content-Length: {length}")
    if chunked:
        lines.append("Transfer-Encoding: chunked")
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def read_response(sock: socket.socket, timeout: float = 30.0) -> bytes:
    """What the server answered until it closed (or `timeout`)."""
    sock.settimeout(timeout)
    data = b""
    with contextlib.suppress(OSError):
        while chunk := sock.recv(65536):
            data += chunk
            if b"\r\n\r\n" in data and _complete(data):
                break
    return data


def _complete(data: bytes) -> bool:
    headers, _, body = data.partition(b"\r\n\r\n")
    match = re.search(rb"content-length: (\d+)", headers, re.IGNORECASE)
    return match is not None and len(body) >= int(match.group(1))


def open_fds(pid: int) -> int:
    return len(list(Path(f"/proc/{pid}/fd").iterdir()))
