"""`mcpsqueeze wrap`: build the shared services, open the frontend, relay until the agent leaves."""

from __future__ import annotations

import contextlib
import logging
import subprocess
from collections.abc import Callable
from typing import Any

import anyio

from .._errors import BackendError, UsageError
from .._net import is_loopback
from ..accounting import print_summary
from ..core import Session, SessionServices, build_services, sweep_forever
from ..settings import Settings
from ..transports import (
    Channel,
    HttpSessions,
    ProcessChannel,
    StdioChannel,
    Until,
    bearer_guard,
    check_token_path,
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


# Opens the agent's and the backend's channels for a stdio session instead of this process's stdin/stdout
# and the backend the settings name (`run_wrap(settings, ends)`: in-memory pipes).
Ends = Callable[[Settings], contextlib.AbstractAsyncContextManager[tuple[Channel, Channel]]]


async def _relay_stdio(
    settings: Settings, services: SessionServices, ends: Ends | None, spawned: ProcessChannel | None
) -> int:
    async with contextlib.AsyncExitStack() as stack:
        if ends is not None:
            front, back = await stack.enter_async_context(ends(settings))
        else:  # the backend the CLI spawned (closed by run_wrap) or the settings name, then our stdio
            back = spawned if spawned else await stack.enter_async_context(open_backend(settings))
            front = StdioChannel()
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
    backend = None if spawned is None else ProcessChannel(spawned)
    try:
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
                    code = await _relay_stdio(settings, services, ends, backend)
                else:
                    code = await _serve_http(settings, services, until or on_signals)
                tg.cancel_scope.cancel()
        finally:
            print_summary(services.accountant.close(), settings.quiet)
        return code
    finally:
        if backend is not None:
            await backend.aclose()


# -- streamable HTTP frontend ---------------------------------------------------------------------------


async def _serve_http(settings: Settings, services: SessionServices, until: Until) -> int:
    from starlette.applications import Starlette
    from starlette.routing import Route

    if not settings.is_url:
        import shutil

        if shutil.which(settings.target[0]) is None:
            raise BackendError(f"cannot start the backend: command {settings.target[0]!r} was not found")
    sock = tcp_listener(settings.host, settings.port)  # TCP_NODELAY: no ~40 ms Nagle wait per response
    port = sock.getsockname()[1]
    root = Session(settings, services)  # each HTTP session's conversation is one of its callers'

    async def relay(front: Channel, principal: str | None, session_id: str) -> int:
        """One 2025-11-25 HTTP session: a relay to a backend of its own."""
        conversation = root.for_caller(principal, session_id, keep=False, sticky=True)
        try:
            async with open_backend(settings) as back:
                return await Relay(front, back, conversation, compressed=compressed_front(settings)).run()
        except BackendError as exc:
            return await Relay(front, None, conversation, dead_reason=str(exc)).run()

    async with anyio.create_task_group() as tg:
        from ._stateless import StatelessFrontend  # (lazily: stdio start-up needs no HTTP frontend)

        stateless = StatelessFrontend(settings, services, tg)
        frontend = HttpSessions(settings.host, settings.max_sessions, tg, relay, stateless.handle)
        routes = [Route("/mcp", endpoint=frontend, methods=["GET", "POST", "DELETE"])]
        if services.metrics is not None:
            from ..accounting import metrics_endpoint

            routes.append(
                Route("/metrics", metrics_endpoint(services.metrics, check_host=is_loopback(settings.host)))
            )
        app: Any = Starlette(routes=routes)
        if settings.token_file is not None:
            tokens = load_tokens(settings.token_file)
            root.named_tenants = stateless.root.named_tenants = tokens.named
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
