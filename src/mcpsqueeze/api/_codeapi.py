"""The session API of a `Client`, for the Code Mode files it writes (`client.write_code_client`).

The generated Python and TypeScript talk to `mcpsqueeze serve`'s API (docs/session-api.md). A Client
offers the same API — serve's own app (serve/_session_api.py `build_app`) — backed by the Client's own
backends and pipeline, on a private Unix socket: a fresh 0700 directory with an unguessable name, a
0600 socket, no token needed. It runs on the Client's event loop for the Client's lifetime and is
removed when the Client closes.
"""

from __future__ import annotations

import contextlib
import tempfile
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio.abc

from .._errors import BackendError
from ..transports import ServerLink

if TYPE_CHECKING:
    from ..core import Outcome, RecoverRequest
    from ._squeezer import Squeezer

#: One call through the Client's pipeline: (server, tool, arguments, full) -> (presented, outcome).
Invoke = Callable[[str, str, dict[str, Any], bool], Awaitable[tuple[dict[str, Any], "Outcome"]]]

__all__ = ["ClientSessionAPI"]


class ClientSessionAPI:
    """serve's session API over one Client (the `SessionAPI` protocol of serve/_session_api.py)."""

    def __init__(self, backends: dict[str, ServerLink], squeezer: Squeezer, invoke: Invoke) -> None:
        self._backends = backends
        self._squeezer = squeezer
        self._invoke = invoke
        self._server: Any = None
        self.directory: Path | None = None
        self.socket_path: Path | None = None

    # -- what build_app reads ----------------------------------------------------------------------

    @property
    def backends(self) -> dict[str, ServerLink]:
        return self._backends

    def listing(self) -> dict[str, Any]:
        from ..serve import servers_answer

        return servers_answer(self.backends, self._squeezer.settings.recovery_dir)

    metrics = None  # the Client exports no Prometheus metrics

    async def call(
        self, server: str, tool: str, arguments: dict[str, Any], full: bool, principal: str | None = None
    ) -> tuple[int, Any]:
        from ..serve import call_answer, error_body, failure_answer, unknown_server

        backend = self.backends.get(server)
        if backend is None:
            return unknown_server(self.backends, server, "client")
        if not any(t["name"] == tool for t in backend.tools):
            names = ", ".join(t["name"] for t in backend.tools) or "none"
            return 404, error_body(
                "unknown_tool", f"server {server!r} has no tool {tool!r}; its tools are: {names}"
            )
        try:
            presented, outcome = await self._invoke(server, tool, arguments, full)
        except BackendError as exc:
            return failure_answer(exc)
        return call_answer(presented, outcome)

    def recover(self, request: RecoverRequest, principal: str | None = None) -> dict[str, Any]:
        """The caller's principal is ignored: a Client's private socket has one caller, the Client itself.

        RecoveryError (404 from the app) when the id is unknown, expired or evicted."""
        return self._squeezer.answer_recover(request)

    def original(self, response_id: str, principal: str | None = None) -> bytes:
        """The stored original (the principal is ignored, as in `recover`)."""
        from .._jsonbytes import dumps

        return dumps(self._squeezer.original(response_id))

    # -- lifecycle ---------------------------------------------------------------------------------

    async def start(self, tg: anyio.abc.TaskGroup) -> Path:
        """Bind the private socket and serve the API from `tg` (the Client's task group)."""
        import uvicorn

        from ..serve import build_app
        from ..transports import bind_unix, uvicorn_server

        directory = Path(tempfile.mkdtemp(prefix="mcpsqueeze-client-"))  # 0700, unguessable name
        path = directory / "session.sock"
        try:
            sock = bind_unix(path)  # 0600, listening: a caller's connection queues until uvicorn runs
        except BaseException:
            directory.rmdir()
            raise
        self.directory, self.socket_path = directory, path
        config = uvicorn.Config(build_app(self, None), log_level="warning", lifespan="off")
        from ..serve import too_large_body

        self._server = uvicorn_server(config, too_large=too_large_body)
        tg.start_soon(self._serve, sock)
        return path

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
        if self.directory is not None:
            with contextlib.suppress(OSError):
                self.directory.rmdir()
        self.socket_path = self.directory = None
