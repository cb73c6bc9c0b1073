"""Transports: the wire on both sides of a door. JSON-RPC lines, channels to a backend (a spawned
process's stdio, streamable HTTP, in-memory pipes), the backends a door asks, every request answered (the
`Correlator`, the links serve and `Client` hold (`ServerLink`), the 2026-07-28 path's backends), OAuth for
URL backends, and the listening side of the HTTP doors (sockets, bearer tokens, Host and Origin checks,
uvicorn, 2025-11-25 sessions, the 2026-07-28 request and answer).
"""

from __future__ import annotations

from ._bearer import PRINCIPAL_KEY, Tokens, bearer_guard, check_token_path, load_tokens
from ._channels import (
    Channel,
    ChannelClosed,
    ProcessChannel,
    StdioChannel,
    open_backend,
)
from ._correlator import Correlator, Sent, gone_error, what_of
from ._http_sessions import HttpSessions
from ._jsonrpc import (
    BACKEND_GONE,
    INVALID_REQUEST,
    PARSE_ERROR,
    TIMEOUT,
    Invalid,
    Message,
    error_response,
    params_of,
    unreadable_answer,
    valid_id,
    with_id,
)
from ._modern_http import Notify, read_request, respond_json, stream_answer
from ._oauth import clear_tokens, login, preflight
from ._paging import list_tools
from ._server import Until, bind_unix, on_signals, tcp_listener, uvicorn_server
from ._server_link import BackendTimeout, ServerLink
from ._shared_backend import StatelessBackend, open_stateless_backend

__all__ = [
    "BACKEND_GONE",
    "INVALID_REQUEST",
    "PARSE_ERROR",
    "PRINCIPAL_KEY",
    "TIMEOUT",
    "BackendTimeout",
    "Channel",
    "ChannelClosed",
    "Correlator",
    "HttpSessions",
    "Invalid",
    "Message",
    "Notify",
    "ProcessChannel",
    "Sent",
    "ServerLink",
    "StatelessBackend",
    "StdioChannel",
    "Tokens",
    "Until",
    "bearer_guard",
    "bind_unix",
    "check_token_path",
    "clear_tokens",
    "error_response",
    "gone_error",
    "list_tools",
    "load_tokens",
    "login",
    "on_signals",
    "open_backend",
    "open_stateless_backend",
    "params_of",
    "preflight",
    "read_request",
    "respond_json",
    "stream_answer",
    "tcp_listener",
    "unreadable_answer",
    "uvicorn_server",
    "valid_id",
    "what_of",
    "with_id",
]
