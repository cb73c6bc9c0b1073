"""The session door (`mcpsqueeze serve`): the long-running proxy behind the shell shim, Just-Bash and Code
Mode, and the session HTTP API that a `Client` also serves to its Code Mode files."""

from ._session_api import (
    Listen,
    SessionAPI,
    build_app,
    call_answer,
    error_body,
    failure_answer,
    run_serve,
    servers_answer,
    too_large_body,
    unknown_server,
)

__all__ = [
    "Listen",
    "SessionAPI",
    "build_app",
    "call_answer",
    "error_body",
    "failure_answer",
    "run_serve",
    "servers_answer",
    "too_large_body",
    "unknown_server",
]
