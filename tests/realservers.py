"""A real redis-server and a real HAProxy for tests, on ephemeral loopback ports, started and stopped here.

No system services: each is a child process of the test with its own config in a temporary directory.
"""

from __future__ import annotations

import contextlib
import importlib.util
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

REDIS = shutil.which("redis-server")
HAPROXY = shutil.which("haproxy") or ("/usr/sbin/haproxy" if Path("/usr/sbin/haproxy").exists() else None)

# Both halves: the server to talk to and the client package (the `redis` extra) that talks to it. Locally a
# missing one skips; on CI (CI set) tests/conftest.py turns the skip into a failure.
REDIS_CLIENT = importlib.util.find_spec("redis") is not None
needs_redis = pytest.mark.skipif(
    REDIS is None or not REDIS_CLIENT,
    reason="redis-server is not installed (apt-get install redis-server)"
    if REDIS is None
    else "the redis package is not installed (pip install 'mcpsqueeze[redis]')",
)
needs_haproxy = pytest.mark.skipif(
    HAPROXY is None, reason="haproxy is not installed (apt-get install haproxy)"
)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_port(port: int, deadline: float = 10.0, proc: subprocess.Popen[bytes] | None = None) -> None:
    end = time.monotonic() + deadline
    while time.monotonic() < end:
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"process exited with {proc.returncode} before listening on {port}")
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=0.2):
            return
        time.sleep(0.02)
    raise TimeoutError(f"nothing listens on 127.0.0.1:{port}")


class RedisServer:
    """One redis-server on loopback; `stop()` and `start()` again on the same port (an outage)."""

    def __init__(self, directory: Path) -> None:
        assert REDIS is not None
        self.directory = directory
        self.port = free_port()
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        assert REDIS is not None
        self.proc = subprocess.Popen(
            [REDIS, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
             "--dir", str(self.directory), "--protected-mode", "yes"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )  # fmt: skip
        wait_port(self.port, proc=self.proc)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(10)
        self.proc = None


@contextlib.contextmanager
def redis_server(directory: Path) -> Iterator[RedisServer]:
    server = RedisServer(directory)
    server.start()
    try:
        yield server
    finally:
        server.stop()


HAPROXY_CFG = """\
global
    maxconn 2000
defaults
    mode http
    log stderr format raw local0  # every request and its termination state, in haproxy.log
    option httplog
    timeout connect 2s
    timeout client 30s
    timeout server 30s
    retries 2
    option redispatch
frontend mcp
    bind 127.0.0.1:{port}
    default_backend replicas
backend replicas
    balance roundrobin
    # 2025-11-25 clients: a session stays on the replica that created it (the id it answered with)
    stick-table type string len 64 size 100k expire 30m
    stick on req.hdr(mcp-session-id)
    stick store-response res.hdr(mcp-session-id)
    http-response set-header X-Replica %s
{servers}
"""


@contextlib.contextmanager
def haproxy(directory: Path, backends: list[tuple[str, int]]) -> Iterator[int]:
    """HAProxy on an ephemeral loopback port in front of `backends` (name, port); yields its port."""
    assert HAPROXY is not None
    port = free_port()
    servers = "\n".join(
        f"    server {name} 127.0.0.1:{p} check inter 500ms fall 1 rise 1" for name, p in backends
    )
    cfg = directory / "haproxy.cfg"
    cfg.write_text(HAPROXY_CFG.format(port=port, servers=servers))
    with open(directory / "haproxy.log", "wb") as log:  # a file: a pipe nobody reads would stall it
        proc = subprocess.Popen([HAPROXY, "-db", "-f", str(cfg)], stdout=subprocess.DEVNULL, stderr=log)
    try:
        wait_port(port, proc=proc)
        yield port
    finally:
        proc.terminate()
        proc.wait(10)
