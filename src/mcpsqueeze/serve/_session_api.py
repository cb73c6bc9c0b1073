"""`mcpsqueeze serve`: the session proxy behind the shim, one core session for all its backends (and
one per caller). The API (docs/session-api.md) is a thin door onto that session."""

from __future__ import annotations

import contextlib
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import anyio.abc

from .._errors import BackendError, RecoveryError, UsageError
from .._jsonbytes import dumps, loads
from .._net import is_loopback
from .._voice import ShellVoice
from ..accounting import print_summary
from ..core import Outcome, RecoverRequest, Session, build_services, listed_entry, sweep_forever
from ..recovery import check_if_present, ensure_private_dir, is_response_id
from ..settings import ServerSpec, Settings, ToolFilter
from ..transports import (
    PRINCIPAL_KEY,
    BackendTimeout,
    ServerLink,
    Tokens,
    Until,
    bearer_guard,
    bind_unix,
    check_token_path,
    load_tokens,
    on_signals,
    tcp_listener,
    uvicorn_server,
)

__all__ = ["SHUTDOWN_GRACE", "Backends", "Listen", "NotFound", "build_app", "run_serve", "too_large_body"]

logger = logging.getLogger(__name__)

SHUTDOWN_GRACE = 3  # seconds in-flight calls get after SIGTERM/SIGINT; a hung backend then takes up to
# 1.5 s to stop (stdin closed, SIGTERM, SIGKILL: ProcessChannel): together under the 10 s a container gives


@dataclass(frozen=True)
class Listen:
    """Where the API listens: a Unix socket (default) or loopback TCP with a bearer token."""

    socket_path: Path | None
    tcp: tuple[str, int] | None = None
    token_file: Path | None = None


class NotFound(UsageError):
    """A server or tool a session does not have (404, `code` naming which)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


class Backends:
    """A session's backends (a `ServerLink` each) and the core session their results go through, one
    per caller: serve's, and a `Client`'s, which serves the same API to its Code Mode files."""

    def __init__(
        self,
        settings: Settings,
        specs: list[ServerSpec],
        tools: ToolFilter,
        session: Session,
        holder: str = "session",
    ) -> None:
        self.settings = settings
        self.session = session
        self.holder = holder  # how errors name it: this session, this client
        self.backends = {spec.name: ServerLink(spec, tools, settings.timeout) for spec in specs}
        self.tg: anyio.abc.TaskGroup | None = None

    async def start(self, tg: anyio.abc.TaskGroup) -> None:
        self.tg = tg
        async with anyio.create_task_group() as starting:
            for backend in self.backends.values():
                starting.start_soon(self._try_start, backend)

    async def _try_start(self, backend: ServerLink) -> None:
        assert self.tg is not None
        try:
            await backend.ensure(self.tg)
        except BackendError as exc:
            logger.warning(f"mcpsqueeze: {exc}")

    def listing(self) -> dict[str, Any]:
        """The `GET /v1/servers` answer: each backend's state and tools, and where originals are kept."""
        servers = [
            {"name": b.name, "status": b.status, "error": b.error, "tools": b.tools}
            for b in self.backends.values()
        ]
        return {"servers": servers, "recovery_dir": str(self.settings.recovery_dir)}

    async def invoke(
        self, server: str, tool: str, arguments: dict[str, Any], full: bool, principal: str | None = None
    ) -> tuple[dict[str, Any], Outcome]:
        """One call through the caller's session: the presented result and what the stages did.
        NotFound for an unknown server or tool, BackendError when the backend fails."""
        backend = self.backends.get(server)
        if backend is None:
            known = ", ".join(sorted(self.backends)) or "none"
            raise NotFound("unknown_server", f"no server named {server!r}; this {self.holder} has: {known}")
        if backend.status != "up":
            assert self.tg is not None
            await backend.ensure(self.tg)
        if not any(t["name"] == tool for t in backend.tools):
            names = ", ".join(t["name"] for t in backend.tools) or "none"
            raise NotFound("unknown_tool", f"server {server!r} has no tool {tool!r}; its tools are: {names}")
        session = self.session.for_caller(principal)
        if full:  # the stored original of this same call, or the error for a tool with side effects
            answer = await session.full_outcome(
                server, tool, arguments, entry=listed_entry(backend.tools, tool)
            )
            if answer is not None:
                return answer
        with session.working():
            result = await backend.call(tool, arguments)
        return await session.present_outcome(server, tool, arguments, result, full=full)

    def stop(self) -> None:
        for backend in self.backends.values():
            backend.stop()


def error_body(code: str, message: str) -> dict[str, Any]:
    """The body of every error answer of the session API."""
    return {"error": {"code": code, "message": message}}


def too_large_body(message: str) -> bytes:
    """The API's 413 answer (see transports/_http_limits.py)."""
    return dumps(error_body("too_large", message))


def build_app(session: Backends, token: Tokens | None) -> Any:
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import Response
    from starlette.routing import Route

    def reply(status: int, body: Any) -> Response:
        # our encoder, not JSONResponse's json.dumps: a result may hold what JSON allows but UTF-8 cannot
        # (a lone surrogate, escaped) or nest deeper than json.dumps recurses
        return Response(dumps(body), status_code=status, media_type="application/json")

    def refusal(status: int, code: str) -> Any:
        """A route's error of one kind as the API's error answer (a NotFound's code names what)."""

        async def refuse(request: Request, exc: Exception) -> Response:
            return reply(status, error_body(exc.code if isinstance(exc, NotFound) else code, str(exc)))

        return refuse

    # An error is answered by its most specific kind here (a usage error: a bad body, a query that does not
    # apply, lines that start past the end, ...).
    refusals = {
        NotFound: refusal(404, "not_found"),
        UsageError: refusal(400, "bad_request"),
        RecoveryError: refusal(404, "not_found"),
        BackendTimeout: refusal(504, "timeout"),
        BackendError: refusal(502, "backend"),
    }

    async def servers(request: Request) -> Response:
        return reply(200, session.listing())

    async def health(request: Request) -> Response:
        async with anyio.create_task_group() as tg:
            for backend in session.backends.values():
                tg.start_soon(backend.ping)
        states = {b.name: b.status for b in session.backends.values()}
        return reply(200 if all(s == "up" for s in states.values()) else 503, {"servers": states})

    async def call(request: Request) -> Response:
        try:  # strict, as wrap and the shim read JSON: no NaN/Infinity, no 1e999, bounded nesting
            body = loads(await request.body())
        except ValueError as exc:
            raise UsageError(f"the body must be JSON: {exc}") from None
        if not isinstance(body, dict) or not all(isinstance(body.get(k), str) for k in ("server", "tool")):
            raise UsageError('send {"server": ..., "tool": ..., "arguments": {...}}')
        arguments = {} if body.get("arguments") is None else body["arguments"]
        if not isinstance(arguments, dict):
            raise UsageError("arguments must be a JSON object")
        full = body.get("full") is True
        presented, outcome = await session.invoke(
            body["server"], body["tool"], arguments, full, request.scope.get(PRINCIPAL_KEY)
        )
        return reply(
            200,
            {
                "result": presented,
                "action": outcome.action,
                "response_id": outcome.response_id,
                "original_response_file": outcome.original_file,
            },
        )

    async def recover(request: Request) -> Response:
        # The query string is the recover arguments (numbers as digit strings; a repeated key is a list;
        # more ids as response_id=...), parsed as every door does.
        params = request.query_params
        arguments: dict[str, Any] = {}
        for key in params:
            values = params.getlist(key)
            arguments[key] = values if len(values) > 1 else values[0]
        ids = [request.path_params["response_id"], *params.getlist("response_id")]
        arguments["response_id"] = ids if len(ids) > 1 else ids[0]
        asked = RecoverRequest.parse(arguments)
        result = await anyio.to_thread.run_sync(
            session.session.for_caller(request.scope.get(PRINCIPAL_KEY)).answer_recover, asked
        )
        return reply(200, {"result": result})

    async def original(request: Request) -> Response:
        response_id = request.path_params["response_id"]
        if not is_response_id(response_id):
            raise UsageError(f"{response_id!r} is not a response id (32 hex)")
        data = await anyio.to_thread.run_sync(  # exactly as kept, counted as a recovery (as every door's is)
            session.session.for_caller(request.scope.get(PRINCIPAL_KEY)).stored, response_id
        )
        return Response(data, media_type="application/json")

    routes = [
        Route("/v1/servers", servers),
        Route("/v1/health", health),
        Route("/v1/call", call, methods=["POST"]),
        Route("/v1/recover/{response_id}", recover),
        Route("/v1/original/{response_id}", original),
    ]
    metrics = session.session.services.metrics
    if metrics is not None:  # GET /metrics (Prometheus), behind the same token as the rest of the API
        from ..accounting import metrics_endpoint

        routes.append(Route("/metrics", metrics_endpoint(metrics)))
    app = Starlette(routes=routes, exception_handlers=refusals)
    return app if token is None else bearer_guard(app, token)


def check_listen(listen: Listen, recovery_dir: Path) -> None:
    """Every refusal that needs no side effect, first: nothing is created for a session that cannot run."""
    if listen.tcp is not None:
        if not is_loopback(listen.tcp[0]):
            raise UsageError(
                f"--listen {listen.tcp[0]} is not a loopback address; serve accepts 127.0.0.1 or ::1 only "
                "(use the Unix socket, or a loopback port behind your own authenticated tunnel)"
            )
        assert listen.token_file is not None
        check_token_path(listen.token_file)
    else:
        assert listen.socket_path is not None
        check_if_present(listen.socket_path.parent, "socket directory")
    check_if_present(recovery_dir, "recovery directory")


def check_servers(specs: list[ServerSpec]) -> None:
    """A server the shell door could never call is refused before anything starts: `mcpsq recover ...`
    is the shim's own command, so the tools of a server named `recover` would be out of reach."""
    for spec in specs:
        if spec.name == "recover":
            raise UsageError(
                "a server named 'recover' cannot be called from the shell (`mcpsq recover` reads originals); "
                "rename it in the serve config (or with -n NAME)"
            )


async def run_serve(
    settings: Settings,
    specs: list[ServerSpec],
    tools: ToolFilter,
    listen: Listen,
    until: Until = on_signals,
) -> int:
    """Serve the session API until SIGINT or SIGTERM; `until`, given the server's stop function, ends
    it instead (a host running the door in its own process: the tests' in-process serve)."""
    check_servers(specs)
    check_listen(listen, settings.recovery_dir)
    ensure_private_dir(settings.recovery_dir)
    token = None
    if listen.tcp is not None:
        assert listen.token_file is not None
        token = load_tokens(listen.token_file)
        sock = tcp_listener(*listen.tcp)  # TCP_NODELAY on its connections
        where = "http://{}:{}".format(*sock.getsockname()[:2])
    else:
        assert listen.socket_path is not None
        sock = bind_unix(listen.socket_path)
        where = str(listen.socket_path)
    session = Backends(
        settings, specs, tools, Session(settings, build_services(settings, True), ShellVoice())
    )
    session.session.named_tenants = token is not None and token.named
    try:
        async with anyio.create_task_group() as tg:
            await session.start(tg)
            tg.start_soon(sweep_forever, settings)
            app = build_app(session, token)  # SHUTDOWN_GRACE: a call to a hung backend must not block exit
            server = uvicorn_server(app, settings.max_body, too_large_body, grace=SHUTDOWN_GRACE)

            def stop() -> None:
                server.should_exit = True

            tg.start_soon(until, stop)
            up = [b.name for b in session.backends.values() if b.status == "up"]
            logger.warning(f"mcpsqueeze: session ready on {where}; backends up: {', '.join(up) or 'none'}")
            logger.warning(f"mcpsqueeze: recovery directory {settings.recovery_dir}")
            await server.serve(sockets=[sock])
            session.stop()
            tg.cancel_scope.cancel()
    finally:
        if listen.socket_path is not None:
            with contextlib.suppress(OSError):
                listen.socket_path.unlink()
        print_summary(session.session.services.accountant.close(), settings.quiet)
    return 0
