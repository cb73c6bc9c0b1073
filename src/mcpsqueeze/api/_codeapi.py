"""The session API of a `Client` for the Code Mode files it writes: serve's app over the Client's own
`Backends`, on a private Unix socket (a fresh 0700 directory, a 0600 socket, no token: one caller) for the
Client's lifetime.
"""

from __future__ import annotations

import contextlib
import tempfile
from pathlib import Path
from typing import Any

import anyio.abc

from ..serve import Backends, build_app, too_large_body
from ..transports import bind_unix, uvicorn_server

__all__ = ["PrivateAPI"]


class PrivateAPI:
    """serve's session API over one Client's backends, on a private socket."""

    def __init__(self, backends: Backends) -> None:
        self.backends = backends
        self._server: Any = None
        self.socket_path: Path | None = None  # in a directory of its own

    async def start(self, tg: anyio.abc.TaskGroup) -> None:
        """Bind the private socket and serve the API from `tg` (the Client's task group)."""
        directory = Path(tempfile.mkdtemp(prefix="mcpsqueeze-client-"))  # 0700, unguessable name
        path = directory / "session.sock"
        try:
            sock = bind_unix(path)  # 0600, listening: a caller's connection queues until uvicorn runs
        except BaseException:
            directory.rmdir()
            raise
        self.socket_path = path
        self._server = uvicorn_server(build_app(self.backends, None), too_large=too_large_body)
        tg.start_soon(self._serve, sock)

    async def _serve(self, sock: Any) -> None:
        try:
            await self._server.serve(sockets=[sock])
        finally:
            sock.close()

    def close(self) -> None:
        """Stop serving and remove the socket and its directory."""
        if self._server is not None:
            self._server.should_exit = True
        if self.socket_path is not None:
            with contextlib.suppress(OSError):
                self.socket_path.unlink()
            with contextlib.suppress(OSError):
                self.socket_path.parent.rmdir()
        self.socket_path = None
