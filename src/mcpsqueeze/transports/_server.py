"""The listening side of the HTTP doors (`wrap --transport streamable-http`, `serve`, a Client's Code
Mode socket): sockets, uvicorn without its own signal handling, and the signals that stop a door cleanly.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import stat
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

import anyio

from .._errors import UsageError
from ..recovery import ensure_private_dir
from ._bearer import warn_if_readable
from ._http_limits import DEFAULT_MAX_BODY, BodyLimit, timed_protocol

__all__ = ["Until", "bind_unix", "on_signals", "tcp_listener", "uvicorn_server"]

# What ends a door early, given the door's stop function: by default SIGINT or SIGTERM (`on_signals`); a
# host that runs the door in its own process passes its own (the tests' in-process wrap and serve).
Until = Callable[[Callable[[], None]], Coroutine[Any, Any, None]]


async def on_signals(stop: Callable[[], None]) -> None:
    """Call `stop` on the first SIGINT or SIGTERM: the caller then ends cleanly and prints its summary."""
    with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
        async for _ in signals:
            stop()
            return


def tcp_listener(host: str, port: int) -> socket.socket:
    """A listening TCP socket for uvicorn whose connections get TCP_NODELAY (Linux passes it on to accepted
    sockets): asyncio sets it only on sockets whose proto is IPPROTO_TCP, and without it a response's body
    waits for the client's delayed ACK of its head (~40 ms a response)."""
    sock = socket.socket(
        socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP
    )
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.bind((host, port))
    sock.listen(128)
    return sock


def uvicorn_server(
    app: Any,
    max_body: int = DEFAULT_MAX_BODY,
    too_large: Callable[[str], bytes] | None = None,
    grace: int | None = None,
) -> Any:
    """uvicorn's server for `app` without its own signal handling: ours stops it gracefully (in-flight
    requests get `grace` seconds) and prints the summary.

    Every door gets the bounds of `_http_limits`: request bodies of at most `max_body` bytes (413 past it,
    rendered by `too_large`, JSON-RPC by default) and `HEAD_TIMEOUT` to send a request head."""
    import uvicorn
    from uvicorn.protocols.http.auto import AutoHTTPProtocol

    config = uvicorn.Config(
        BodyLimit(app, max_body, too_large),
        log_level="warning",
        lifespan="off",
        http=timed_protocol(AutoHTTPProtocol),
        timeout_graceful_shutdown=grace,
    )

    class Server(uvicorn.Server):
        @contextlib.contextmanager
        def capture_signals(self) -> Any:
            yield

    return Server(config)


def bind_unix(path: Path) -> socket.socket:
    """A listening Unix socket at `path`, 0600 in a private directory; a stale socket is replaced,
    a live one (another session) or anything that is not a socket is refused."""
    ensure_private_dir(path.parent, what="socket directory")
    warn_if_readable(path.parent, "socket directory")
    if path.is_symlink() or (path.exists() and not stat.S_ISSOCK(path.lstat().st_mode)):
        raise UsageError(f"{path} exists and is not a socket; refusing to replace it")
    probe = socket.socket(socket.AF_UNIX)
    try:
        probe.connect(str(path))
    except OSError:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()  # a stale socket from a session that died
    else:
        raise UsageError(f"another session already listens on {path}")
    finally:
        probe.close()
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    old = os.umask(0o177)
    try:
        sock.bind(str(path))
    finally:
        os.umask(old)
    os.chmod(path, 0o600)
    sock.listen(128)
    return sock
