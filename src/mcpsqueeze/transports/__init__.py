"""Transports: the wire on both sides of a door. JSON-RPC lines, channels to a backend (a spawned
process's stdio, streamable HTTP, in-memory pipes), the backend port (`Backend`: every request is
answered) with its `Correlator` adapter and the links serve and `Client` hold (`ServerLink`), OAuth for
URL backends, and the listening side of the HTTP doors (sockets, bearer tokens, uvicorn).
"""

from __future__ import annotations

from .._lazy import LazyFace

TYPE_CHECKING = False  # not `typing.TYPE_CHECKING`: importing typing is not free at start-up
if TYPE_CHECKING:
    from ._bearer import PRINCIPAL_KEY, Tokens, bearer_guard, check_token_path, load_tokens
    from ._channels import (
        Channel,
        ChannelClosed,
        ProcessChannel,
        SessionMessageChannel,
        StdioChannel,
        http_backend,
        open_backend,
        open_channel,
        open_process_channel,
    )
    from ._correlator import Backend, Correlator, Sent, gone_error, what_of
    from ._jsonrpc import (
        BACKEND_GONE,
        INVALID_PARAMS,
        INVALID_REQUEST,
        PARSE_ERROR,
        TIMEOUT,
        UNREADABLE,
        Invalid,
        Message,
        error_response,
        line_of,
        parse_line,
        unreadable_answer,
        valid_id,
        with_id,
    )
    from ._oauth import backend_auth, clear_tokens, login, preflight
    from ._paging import MAX_PAGES, list_tool_names, list_tools
    from ._server import Until, bind_unix, on_signals, tcp_listener, uvicorn_server
    from ._server_link import BackendTimeout, ServerLink

__all__ = [
    "BACKEND_GONE",
    "INVALID_PARAMS",
    "INVALID_REQUEST",
    "MAX_PAGES",
    "PARSE_ERROR",
    "PRINCIPAL_KEY",
    "TIMEOUT",
    "UNREADABLE",
    "Backend",
    "BackendTimeout",
    "Channel",
    "ChannelClosed",
    "Correlator",
    "Invalid",
    "Message",
    "ProcessChannel",
    "Sent",
    "ServerLink",
    "SessionMessageChannel",
    "StdioChannel",
    "Tokens",
    "Until",
    "backend_auth",
    "bearer_guard",
    "bind_unix",
    "check_token_path",
    "clear_tokens",
    "error_response",
    "gone_error",
    "http_backend",
    "line_of",
    "list_tool_names",
    "list_tools",
    "load_tokens",
    "login",
    "on_signals",
    "open_backend",
    "open_channel",
    "open_process_channel",
    "parse_line",
    "preflight",
    "tcp_listener",
    "unreadable_answer",
    "uvicorn_server",
    "valid_id",
    "what_of",
    "with_id",
]

_MODULES = {
    "BACKEND_GONE": "_jsonrpc",
    "INVALID_PARAMS": "_jsonrpc",
    "INVALID_REQUEST": "_jsonrpc",
    "PARSE_ERROR": "_jsonrpc",
    "TIMEOUT": "_jsonrpc",
    "UNREADABLE": "_jsonrpc",
    "Backend": "_correlator",
    "BackendTimeout": "_server_link",
    "Channel": "_channels",
    "ChannelClosed": "_channels",
    "Correlator": "_correlator",
    "what_of": "_correlator",
    "Sent": "_correlator",
    "gone_error": "_correlator",
    "Invalid": "_jsonrpc",
    "Message": "_jsonrpc",
    "PRINCIPAL_KEY": "_bearer",
    "ProcessChannel": "_channels",
    "ServerLink": "_server_link",
    "SessionMessageChannel": "_channels",
    "StdioChannel": "_channels",
    "Tokens": "_bearer",
    "backend_auth": "_oauth",
    "bearer_guard": "_bearer",
    "bind_unix": "_server",
    "check_token_path": "_bearer",
    "clear_tokens": "_oauth",
    "error_response": "_jsonrpc",
    "http_backend": "_channels",
    "line_of": "_jsonrpc",
    "list_tool_names": "_paging",
    "list_tools": "_paging",
    "MAX_PAGES": "_paging",
    "load_tokens": "_bearer",
    "login": "_oauth",
    "on_signals": "_server",
    "Until": "_server",
    "open_backend": "_channels",
    "open_channel": "_channels",
    "open_process_channel": "_channels",
    "parse_line": "_jsonrpc",
    "preflight": "_oauth",
    "tcp_listener": "_server",
    "unreadable_answer": "_jsonrpc",
    "uvicorn_server": "_server",
    "valid_id": "_jsonrpc",
    "with_id": "_jsonrpc",
}


__getattr__ = LazyFace(__name__, _MODULES, globals())
