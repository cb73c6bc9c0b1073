"""The server side of 2025-11-25 streamable HTTP: sessions on the MCP SDK's transport, each opened by an
`initialize`, ended by DELETE, by idleness or to make room under a cap per caller, each with its own task.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import anyio
import anyio.abc

from .._jsonbytes import loads
from ._bearer import PRINCIPAL_KEY
from ._channels import Channel, SessionMessageChannel
from ._http_limits import RequestGuard, replaying, sdk_security
from ._jsonrpc import error_response
from ._modern_http import is_stateless_request

__all__ = ["SESSION_IDLE_TIMEOUT", "Handler", "HttpSessions", "RunSession"]

logger = logging.getLogger(__name__)

SESSION_IDLE_TIMEOUT = 1800.0  # seconds without any request before an HTTP session and its backend end

#: Runs one session until it ends: its channel to the client, its caller, its id -> an exit code.
RunSession = Callable[[Channel, str | None, str], Awaitable[int]]
#: An ASGI handler (scope, receive, send).
Handler = Callable[[Any, Any, Any], Awaitable[None]]


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
    try:
        message = loads(body)
    except (ValueError, RecursionError):
        return False
    return isinstance(message, dict) and message.get("method") == "initialize" and "id" in message


class HttpSessions:
    """A minimal session manager: each HTTP session's messages go to `run` (a door's relay, with its own
    backend), in a task of `tg`; a 2026-07-28 request (no session) to `stateless`.

    A request is checked (Host, Origin, Content-Type) first, and only an `initialize` whose body has arrived
    opens a session: a refused, stalled or abandoned request never starts a backend. At most ``max_sessions``
    sessions run per principal; at the cap that caller's session idle longest is ended to make room (its
    backend gone before the new one starts), and only when all are busy is a new one refused (503), without
    yielding in between. One tenant never ends another's session; a session's backend ends with it (DELETE,
    room, `SESSION_IDLE_TIMEOUT`, exit)."""

    def __init__(
        self, host: str, max_sessions: int, tg: anyio.abc.TaskGroup, run: RunSession, stateless: Handler
    ) -> None:
        self.max_sessions = max_sessions
        self.tg = tg
        self.run = run
        self.stateless = stateless
        self.sessions: dict[str, _Session] = {}
        self.exit_code = 0  # the first session's that was not 0
        self.guard = RequestGuard.for_bind(host)

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
            await self.stateless(scope, receive, send)
            return
        body = await request.body() if request.method == "POST" else b""
        if not _is_initialize(body):
            message = "Bad Request: Missing session ID (a session starts with an initialize request)"
            await _json_error(-32600, message, 400)(scope, receive, send)
            return
        session = self._open(scope.get(PRINCIPAL_KEY))
        if session is None:
            cap = self.max_sessions
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
        await self._handle(session, scope, replaying(body, receive), send)

    def _open(self, principal: str | None) -> _Session | None:
        """A new session for `principal`, registered (busy) at once; at the cap, that caller's idlest
        session is told to end first (the new one's backend starts once it has). None when every one of
        the caller's sessions is busy. No await: the count and the room are one step."""
        from uuid import uuid4

        from mcp.server.streamable_http import StreamableHTTPServerTransport

        mine = [s for s in self.sessions.values() if s.principal == principal]
        room = None
        if len(mine) >= self.max_sessions:
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
            mcp_session_id=sid, security_settings=sdk_security(), idle_timeout=SESSION_IDLE_TIMEOUT
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
                        code = 0
                        with transport.idle_scope or contextlib.nullcontext():  # abandoned sessions end
                            code = await self.run(front, session.principal, transport.mcp_session_id)
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

    return JSONResponse(error_response(None, code, message), status_code=status, headers=headers)
