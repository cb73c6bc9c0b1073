"""`mcpsqueeze wrap`: build the shared services, open the frontend, relay until the agent leaves."""

from __future__ import annotations

import contextlib
import socket
import sys
import urllib.parse
import uuid
from collections.abc import AsyncIterator
from typing import Any

import anyio
import anyio.abc

from .._auth import bearer_guard, load_or_create_token
from .._errors import BackendError
from .._malloc import tame_malloc
from ..pipeline import Pipeline
from ..services import (
    SessionServices,
    build_services,
    new_pipeline,
    on_signals,
    sweep_forever,
    uvicorn_server,
)
from ..settings import Settings
from ..stats import render_summary
from ._channels import Channel, SessionMessageChannel, StdioChannel, http_backend, open_process_channel
from ._relay import Relay

__all__ = ["open_backend", "run_wrap"]

SESSION_IDLE_TIMEOUT = 1800.0  # seconds without any request before an HTTP session and its backend end


def _check_reachable(url: str, timeout: float = 5.0) -> None:
    parts = urllib.parse.urlsplit(url)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    try:
        with socket.create_connection((parts.hostname or "localhost", port), timeout=timeout):
            pass
    except OSError as exc:
        raise BackendError(
            f"cannot reach the backend at {url}: {exc.strerror or exc}; "
            "check the URL and that the server runs"
        ) from exc


@contextlib.asynccontextmanager
async def open_backend(settings: Settings) -> AsyncIterator[Channel]:
    if settings.is_url:
        async with http_backend(settings.target[0], settings.headers, settings.timeout) as channel:
            yield channel
        return
    channel = await open_process_channel(settings.target)
    try:
        yield channel
    finally:
        await channel.aclose()


async def _relay_stdio(settings: Settings, services: SessionServices) -> int:
    front = StdioChannel()
    async with open_backend(settings) as back:
        relay = Relay(
            front, back, new_pipeline(settings, services), services, recover_tool=_recover(settings)
        )
        return await relay.run()


def _recover(settings: Settings) -> str | None:
    return "squeeze_recover" if (settings.shrink or settings.dedup) else None


def _warm_up() -> None:
    """What the first answers do not need, done while the backend starts: the allocator's settings, and
    the condense engine's import (so the first big result does not pay it)."""
    tame_malloc()
    import mcpsqueeze.shrink  # noqa: F401


async def run_wrap(settings: Settings) -> int:
    """Run the proxy; the summary always reaches stderr, whatever ends the session."""
    if settings.is_url:
        await anyio.to_thread.run_sync(_check_reachable, settings.target[0])
    services = build_services(settings)
    code = 0
    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(anyio.to_thread.run_sync, _warm_up)  # beside the first messages, not before
            tg.start_soon(sweep_forever, settings)
            if settings.transport == "stdio":
                tg.start_soon(on_signals, tg.cancel_scope.cancel)
                code = await _relay_stdio(settings, services)
            else:
                code = await _serve_http(settings, services)
            tg.cancel_scope.cancel()
    finally:
        totals = services.accountant.close()
        print(render_summary(totals), file=sys.stderr)
    return code


# -- streamable HTTP frontend ---------------------------------------------------------------------------


class HttpFrontend:
    """A minimal session manager: each HTTP session gets its own backend connection and relay."""

    def __init__(self, settings: Settings, services: SessionServices, tg: anyio.abc.TaskGroup) -> None:
        from mcp.server.transport_security import TransportSecuritySettings

        self.settings = settings
        self.services = services
        self.tg = tg
        self.sessions: dict[str, Any] = {}
        self.exit_code = 0
        loopback = settings.host in ("127.0.0.1", "localhost", "::1")
        self.security = TransportSecuritySettings(
            enable_dns_rebinding_protection=loopback,
            allowed_hosts=["127.0.0.1", "127.0.0.1:*", "localhost", "localhost:*", "[::1]", "[::1]:*"],
            allowed_origins=["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"],
        )

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        from mcp.server.streamable_http import MCP_SESSION_ID_HEADER, StreamableHTTPServerTransport
        from starlette.requests import Request
        from starlette.responses import JSONResponse

        if scope["type"] != "http":
            return
        request = Request(scope, receive)
        session_id = request.headers.get(MCP_SESSION_ID_HEADER)
        if session_id is not None:
            transport = self.sessions.get(session_id)
            if transport is None:
                response = JSONResponse(
                    {"jsonrpc": "2.0", "id": None, "error": {"code": -32001, "message": "Session not found"}},
                    status_code=404,
                )
                await response(scope, receive, send)
                return
            await transport.handle_request(scope, receive, send)
            return
        if request.method != "POST":
            response = JSONResponse(
                {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "Missing session ID"}},
                status_code=400,
            )
            await response(scope, receive, send)
            return
        transport = StreamableHTTPServerTransport(
            mcp_session_id=uuid.uuid4().hex,
            security_settings=self.security,
            idle_timeout=SESSION_IDLE_TIMEOUT,
        )
        assert transport.mcp_session_id is not None
        self.sessions[transport.mcp_session_id] = transport
        await self.tg.start(self._run_session, transport)
        await transport.handle_request(scope, receive, send)

    async def _relay(self, front: Channel, pipeline: Pipeline) -> int:
        try:
            async with open_backend(self.settings) as back:
                relay = Relay(front, back, pipeline, self.services, recover_tool=_recover(self.settings))
                return await relay.run()
        except BackendError as exc:
            dead = Relay(front, None, pipeline, self.services, recover_tool=None, dead_reason=str(exc))
            return await dead.run()

    async def _run_session(self, transport: Any, *, task_status: Any = anyio.TASK_STATUS_IGNORED) -> None:
        try:
            async with transport.connect() as (read, write):
                task_status.started()
                front = SessionMessageChannel(read, write, server_side=True)
                pipeline = new_pipeline(self.settings, self.services)
                code = 0
                with transport.idle_scope or contextlib.nullcontext():  # abandoned sessions end
                    code = await self._relay(front, pipeline)
                self.exit_code = self.exit_code or code
        finally:
            self.sessions.pop(transport.mcp_session_id, None)
            with anyio.CancelScope(shield=True):
                await transport.terminate()


async def _serve_http(settings: Settings, services: SessionServices) -> int:
    import uvicorn
    from starlette.applications import Starlette
    from starlette.routing import Route

    if not settings.is_url:
        import shutil

        if shutil.which(settings.target[0]) is None:
            raise BackendError(f"cannot start the backend: command {settings.target[0]!r} was not found")
    sock = socket.socket(socket.AF_INET6 if ":" in settings.host else socket.AF_INET)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((settings.host, settings.port))
    sock.listen(128)
    port = sock.getsockname()[1]
    async with anyio.create_task_group() as tg:
        frontend = HttpFrontend(settings, services, tg)
        app: Any = Starlette(routes=[Route("/mcp", endpoint=frontend, methods=["GET", "POST", "DELETE"])])
        if settings.token_file is not None:
            app = bearer_guard(app, load_or_create_token(settings.token_file))
        config = uvicorn.Config(app, log_level="warning", lifespan="off", timeout_graceful_shutdown=2)
        server = uvicorn_server(config)

        def stop() -> None:
            server.should_exit = True

        tg.start_soon(on_signals, stop)
        print(
            f"mcpsqueeze: serving streamable HTTP on http://{settings.host}:{port}/mcp",
            file=sys.stderr,
            flush=True,
        )
        try:
            await server.serve(sockets=[sock])
        finally:
            tg.cancel_scope.cancel()
    return frontend.exit_code
