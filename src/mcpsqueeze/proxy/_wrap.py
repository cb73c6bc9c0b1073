"""`mcpsqueeze wrap`: build the shared services, open the frontend, relay until the agent leaves."""

from __future__ import annotations

import contextlib
import logging
import subprocess
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any

import anyio
import anyio.abc

from .._errors import BackendError, UsageError
from .._net import is_loopback
from ..accounting import print_summary
from ..core import Session, SessionServices, build_services, sweep_forever
from ..settings import Settings
from ..transports import (
    PRINCIPAL_KEY,
    Channel,
    ProcessChannel,
    RequestGuard,
    SessionMessageChannel,
    StdioChannel,
    Until,
    bearer_guard,
    check_token_path,
    is_stateless_request,
    load_tokens,
    on_signals,
    open_backend,
    tcp_listener,
    uvicorn_server,
)
from ._compressed_front import compressed_front
from ._relay import Relay

__all__ = ["Ends", "check_http_bind", "run_wrap"]

logger = logging.getLogger(__name__)

SESSION_IDLE_TIMEOUT = 1800.0  # seconds without any request before an HTTP session and its backend end


# Opens the agent's and the backend's channels for a stdio session: by default this process's stdin/stdout
# and the backend the settings name; `run_wrap(settings, ends)` takes others (in-memory pipes).
Ends = Callable[[Settings], contextlib.AbstractAsyncContextManager[tuple[Channel, Channel]]]


def _process_ends(spawned: ProcessChannel | None) -> Ends:
    @contextlib.asynccontextmanager
    async def ends(settings: Settings) -> AsyncIterator[tuple[Channel, Channel]]:
        if spawned is not None:  # (closed by run_wrap)
            yield StdioChannel(), spawned
            return
        async with open_backend(settings) as back:
            yield StdioChannel(), back

    return ends


async def _relay_stdio(settings: Settings, services: SessionServices, ends: Ends) -> int:
    async with ends(settings) as (front, back):
        relay = Relay(front, back, Session(settings, services), compressed=compressed_front(settings))
        return await relay.run()


def check_http_bind(settings: Settings) -> None:
    """Beyond loopback, anyone who reaches the port could drive the backend: require the token first.
    A given token path is checked here too, before the recovery directory or anything else is made."""
    if settings.transport != "streamable-http":
        return
    if settings.token_file is not None:
        check_token_path(settings.token_file)
    if is_loopback(settings.host):
        return
    if settings.token_file is None:
        raise UsageError(
            f"--host {settings.host} is reachable from other machines, so it needs a token: add "
            "--token-file PATH (created 0600 if missing; clients send "
            "`Authorization: Bearer <its content>`), or bind --host 127.0.0.1"
        )


async def run_wrap(
    settings: Settings,
    ends: Ends | None = None,
    until: Until | None = None,
    spawned: subprocess.Popen[bytes] | None = None,
) -> int:
    """Run the proxy; the summary always reaches stderr, whatever ends the session. A host running the door in
    its own process (the tests: tests/memwrap.py) may give `ends` (a stdio session's channels, e.g.
    in-memory pipes) and `until` (ends it instead of SIGINT/SIGTERM); the CLI gives the backend it
    `spawned` already (closed here, whatever happens)."""
    backend = None if spawned is None else ProcessChannel(spawned, settings.target)
    try:
        return await _run_wrap(settings, ends, until, _process_ends(backend))
    finally:
        if backend is not None:
            await backend.aclose()


async def _run_wrap(settings: Settings, ends: Ends | None, until: Until | None, own: Ends) -> int:
    if ends is not None and settings.transport != "stdio":
        raise UsageError("given channel ends serve a stdio session only")
    check_http_bind(settings)
    if settings.is_url and ends is None:
        from ..transports import preflight

        await preflight(settings.target[0], settings.headers, settings.oauth)  # reachable, logged in
    services = build_services(settings, metrics=settings.transport == "streamable-http")
    services.accountant.start()
    code = 0
    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(sweep_forever, settings)
            if settings.transport == "stdio":
                if ends is None or until is not None:
                    tg.start_soon(until or on_signals, tg.cancel_scope.cancel)
                code = await _relay_stdio(settings, services, ends or own)
            else:
                code = await _serve_http(settings, services, until or on_signals)
            tg.cancel_scope.cancel()
    finally:
        print_summary(services.accountant.close(), settings.quiet)
    return code


# -- streamable HTTP frontend ---------------------------------------------------------------------------


@dataclass(eq=False)
class _Session:
    """One HTTP session: its transport, its caller, and how busy it is; `stop` ends its relay (and so its
    backend), `ended` is set once the backend is gone."""

    transport: Any
    principal: str | None
    in_flight: int = 1  # requests (and open streams) being handled: created busy, its initialize pending
    last_seen: float = 0.0  # when its last request ended (monotonic)
    after: _Session | None = None  # the session it replaces at the cap: its backend ends first
    stop: anyio.CancelScope = field(default_factory=anyio.CancelScope)
    ended: anyio.Event = field(default_factory=anyio.Event)


def _is_initialize(body: bytes) -> bool:
    from .._jsonbytes import loads

    try:
        message = loads(body)
    except (ValueError, RecursionError):
        return False
    return isinstance(message, dict) and message.get("method") == "initialize" and "id" in message


def _replaying(body: bytes, receive: Any) -> Any:
    """`receive` with the body already read handed out again first (the transport reads it itself)."""
    replayed = False

    async def replay() -> dict[str, Any]:
        nonlocal replayed
        if replayed:
            return dict(await receive())
        replayed = True
        return {"type": "http.request", "body": body, "more_body": False}

    return replay


class HttpFrontend:
    """A minimal session manager: each HTTP session gets its own backend and relay.

    A request is checked (Host, Origin, Content-Type) first, and only an `initialize` whose body has arrived
    opens a session: a refused, stalled or abandoned request never starts a backend. At most ``max_sessions``
    sessions run per principal; at the cap that caller's session idle longest is ended to make room (its
    backend gone before the new one starts), and only when all are busy is a new one refused (503), without
    yielding in between. One tenant never ends another's session; a session's backend ends with it (DELETE,
    room, `SESSION_IDLE_TIMEOUT`, exit)."""

    def __init__(self, settings: Settings, services: SessionServices, tg: anyio.abc.TaskGroup) -> None:
        from mcp.server.transport_security import TransportSecuritySettings

        self.settings = settings
        self.root = Session(settings, services)  # each HTTP session's conversation is one of its callers'
        self.tg = tg
        self.sessions: dict[str, _Session] = {}
        self.exit_code = 0
        self.guard = RequestGuard.for_bind(settings.host)
        # The guard above already checked Host and Origin (with the arrival address for wildcard binds).
        self.security = TransportSecuritySettings(enable_dns_rebinding_protection=False)
        from ._stateless import StatelessFrontend  # (lazily: stdio start-up needs no HTTP frontend)

        self.stateless = StatelessFrontend(settings, services, tg, self.security)

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        from mcp.server.streamable_http import MCP_SESSION_ID_HEADER
        from starlette.requests import Request
        from starlette.responses import Response

        if scope["type"] != "http":
            return
        request = Request(scope, receive)
        refused = self.guard.refusal(scope, request.method, request.headers)
        if refused is not None:
            await Response(refused[1], status_code=refused[0])(scope, receive, send)
            return
        session_id = request.headers.get(MCP_SESSION_ID_HEADER)
        if session_id is not None:
            session = self.sessions.get(session_id)
            if session is None or session.principal != scope.get(PRINCIPAL_KEY):
                await _json_error(-32001, "Session not found", 404)(scope, receive, send)
                return
            session.in_flight += 1
            await self._handle(session, scope, receive, send)
            return
        if is_stateless_request(request.headers):  # MCP 2026-07-28: no session, one POST per request
            await self.stateless.handle(scope, receive, send)
            return
        body = await request.body() if request.method == "POST" else b""
        if not _is_initialize(body):
            message = "Bad Request: Missing session ID (a session starts with an initialize request)"
            await _json_error(-32600, message, 400)(scope, receive, send)
            return
        session = self._open(scope.get(PRINCIPAL_KEY))
        if session is None:
            cap = self.settings.max_sessions
            message = (
                f"this proxy already runs {cap} sessions for this caller (the --max-sessions limit); end one "
                "(HTTP DELETE with its mcp-session-id header) or restart wrap with a higher --max-sessions"
            )
            await _json_error(-32000, message, 503, {"Retry-After": "5"})(scope, receive, send)
            return
        try:
            await self.tg.start(self._run_session, session)
        except BaseException:
            self._forget(session)
            raise
        await self._handle(session, scope, _replaying(body, receive), send)

    def _open(self, principal: str | None) -> _Session | None:
        """A new session for `principal`, registered (busy) at once; at the cap, that caller's idlest
        session is told to end first (the new one's backend starts once it has). None when every one of
        the caller's sessions is busy. No await: the count and the room are one step."""
        from uuid import uuid4

        from mcp.server.streamable_http import StreamableHTTPServerTransport

        mine = [s for s in self.sessions.values() if s.principal == principal]
        room = None
        if len(mine) >= self.settings.max_sessions:
            idle = [s for s in mine if not s.in_flight]
            if not idle:
                return None
            # One already ending (deleted) goes first; it counts until its backend is gone.
            room = min(idle, key=lambda s: (not s.stop.cancel_called, s.last_seen))
            self._forget(room)
            if not room.stop.cancel_called:
                logger.info(
                    "session %s ended to make room under --max-sessions (idle longest)",
                    room.transport.mcp_session_id,
                )
                room.stop.cancel()
        sid = uuid4().hex
        transport = StreamableHTTPServerTransport(
            mcp_session_id=sid, security_settings=self.security, idle_timeout=SESSION_IDLE_TIMEOUT
        )
        session = _Session(transport, principal, after=room)
        self.sessions[sid] = session
        return session

    def _forget(self, session: _Session) -> None:
        if self.sessions.get(session.transport.mcp_session_id) is session:
            del self.sessions[session.transport.mcp_session_id]

    async def _handle(self, session: _Session, scope: Any, receive: Any, send: Any) -> None:
        """One request of `session`, counted in flight by the caller."""
        try:
            await session.transport.handle_request(scope, receive, send)
        finally:
            session.in_flight -= 1
            session.last_seen = time.monotonic()
            if session.transport.is_terminated:  # DELETE: the backend goes now, not at the next request;
                session.stop.cancel()  # the session counts under the cap until it is gone

    async def _relay(self, front: Channel, session: Session) -> int:
        try:
            async with open_backend(self.settings) as back:
                return await Relay(front, back, session, compressed=compressed_front(self.settings)).run()
        except BackendError as exc:
            return await Relay(front, None, session, dead_reason=str(exc)).run()

    async def _run_session(self, session: _Session, *, task_status: Any = anyio.TASK_STATUS_IGNORED) -> None:
        transport = session.transport
        try:
            if session.after is not None:  # the session ended to make room: its backend is gone first
                await session.after.ended.wait()
            with session.stop:
                async with transport.connect() as (read, write):
                    try:
                        task_status.started()
                        front = SessionMessageChannel(read, write, server_side=True)
                        conversation = self.root.for_caller(
                            session.principal, transport.mcp_session_id, keep=False, sticky=True
                        )
                        code = 0
                        with transport.idle_scope or contextlib.nullcontext():  # abandoned sessions end
                            code = await self._relay(front, conversation)
                        self.exit_code = self.exit_code or code
                    finally:  # terminated before its streams close: the SDK's router then ends quietly
                        with anyio.CancelScope(shield=True):
                            await transport.terminate()
        finally:
            self._forget(session)
            with anyio.CancelScope(shield=True):
                await transport.terminate()
            session.ended.set()


def _json_error(code: int, message: str, status: int, headers: dict[str, str] | None = None) -> Any:
    from starlette.responses import JSONResponse

    body = {"jsonrpc": "2.0", "id": None, "error": {"code": code, "message": message}}
    return JSONResponse(body, status_code=status, headers=headers)


async def _serve_http(settings: Settings, services: SessionServices, until: Until) -> int:
    from starlette.applications import Starlette
    from starlette.routing import Route

    if not settings.is_url:
        import shutil

        if shutil.which(settings.target[0]) is None:
            raise BackendError(f"cannot start the backend: command {settings.target[0]!r} was not found")
    sock = tcp_listener(settings.host, settings.port)  # TCP_NODELAY: no ~40 ms Nagle wait per response
    port = sock.getsockname()[1]
    async with anyio.create_task_group() as tg:
        frontend = HttpFrontend(settings, services, tg)
        routes = [Route("/mcp", endpoint=frontend, methods=["GET", "POST", "DELETE"])]
        if services.metrics is not None:
            from ..accounting import metrics_endpoint

            routes.append(
                Route("/metrics", metrics_endpoint(services.metrics, check_host=is_loopback(settings.host)))
            )
        app: Any = Starlette(routes=routes)
        if settings.token_file is not None:
            tokens = load_tokens(settings.token_file)
            frontend.root.named_tenants = frontend.stateless.root.named_tenants = tokens.named
            app = bearer_guard(app, tokens)
        server = uvicorn_server(app, settings.max_body, grace=2)

        def stop() -> None:
            server.should_exit = True

        tg.start_soon(until, stop)
        logger.warning(f"mcpsqueeze: serving streamable HTTP on http://{settings.host}:{port}/mcp")
        try:
            await server.serve(sockets=[sock])
        finally:
            tg.cancel_scope.cancel()
    return frontend.exit_code
