"""The text of the generated Python runtime (`squeeze_runtime.py`): standard library only.

Kept as one template so the generated code can be read and golden-tested as a whole. Placeholders are
`__NAME__` tokens replaced with Python literals by `_python.py`; nothing secret is ever substituted.
"""

# ruff: noqa: E501  (the template is generated code, wrapped for reading, not for this linter)
from __future__ import annotations

__all__ = ["PYTHON_RUNTIME"]

PYTHON_RUNTIME = r'''"""Runtime of the Code Mode modules written by `mcpsqueeze install-commands --lang python`.

Talks to a running `mcpsqueeze serve` session (docs/session-api.md) with the standard library only.
Where the session is: MCPSQUEEZE_SOCKET, else MCPSQUEEZE_URL (+ MCPSQUEEZE_TOKEN_FILE), else the place
it was when these files were written. A TCP session's token is read from its 0600 token file on every
call; no secret is stored in this file.
"""

from __future__ import annotations

import http.client
import json
import os
import socket
import stat
import urllib.parse
from typing import Any

__all__ = [
    "SqueezeError",
    "SqueezeSessionError",
    "SqueezeToolError",
    "call_tool",
    "invoke",
    "squeeze_recover",
    "truncation_of",
]

GENERATED_SOCKET: str | None = __SOCKET__
GENERATED_URL: str | None = __URL__
GENERATED_TOKEN_FILE: str | None = __TOKEN_FILE__
TIMEOUT = 600.0


class SqueezeError(Exception):
    """Root of the errors these modules raise."""


class SqueezeSessionError(SqueezeError):
    """The session could not be reached or refused the call; `code` says why (e.g. "unknown_tool")."""

    def __init__(self, message: str, code: str = "unreachable", status: int | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.status = status


class SqueezeToolError(SqueezeError):
    """The tool ran and reported an error (`isError`); `result` is the CallToolResult it returned."""

    def __init__(self, server: str, tool: str, message: str, result: dict[str, Any]) -> None:
        super().__init__(f"{server}.{tool} failed: {message}")
        self.server = server
        self.tool = tool
        self.message = message
        self.result = result


class _Squeezed:
    """What every returned value carries besides its data: the truncation record and the raw result."""

    truncation: dict[str, Any] | None
    response_id: str | None
    action: str
    result: dict[str, Any]


class SqueezedDict(dict, _Squeezed):
    pass


class SqueezedList(list, _Squeezed):
    pass


class SqueezedText(str, _Squeezed):
    pass


def truncation_of(value: Any) -> dict[str, Any] | None:
    """The `_meta.truncation` record of a returned value (None when the result was not changed)."""
    return getattr(value, "truncation", None)


class _UnixConnection(http.client.HTTPConnection):
    def __init__(self, path: str, timeout: float) -> None:
        super().__init__("localhost", timeout=timeout)
        self._path = path

    def connect(self) -> None:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(self.timeout)
        sock.connect(self._path)
        self.sock = sock


def _read_token(path: str) -> str:
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except OSError as exc:
        raise SqueezeSessionError(
            f"cannot read the session token file {path} ({exc.strerror}); set MCPSQUEEZE_TOKEN_FILE"
        ) from None
    with os.fdopen(fd, "r", encoding="ascii") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode) or info.st_mode & 0o077:
            raise SqueezeSessionError(f"the token file {path} must be a regular 0600 file of yours")
        token = handle.read().strip()
    if not token:
        raise SqueezeSessionError(f"the token file {path} is empty; restart `mcpsqueeze serve --listen`")
    return token


def _connection() -> tuple[http.client.HTTPConnection, dict[str, str]]:
    sock = os.environ.get("MCPSQUEEZE_SOCKET") or None
    url = None if sock else os.environ.get("MCPSQUEEZE_URL") or None
    token_file = os.environ.get("MCPSQUEEZE_TOKEN_FILE") or None
    if sock is None and url is None:
        sock, url, token_file = GENERATED_SOCKET, GENERATED_URL, token_file or GENERATED_TOKEN_FILE
    if sock is not None:
        return _UnixConnection(sock, TIMEOUT), {}
    if url is None:
        raise SqueezeSessionError("no session address: set MCPSQUEEZE_SOCKET or MCPSQUEEZE_URL")
    parts = urllib.parse.urlsplit(url)
    if parts.scheme != "http" or parts.hostname not in ("127.0.0.1", "localhost", "::1"):
        raise SqueezeSessionError(f"{url} is not a loopback http:// address; the token goes to loopback only")
    if token_file is None:
        raise SqueezeSessionError("a TCP session needs its token file: set MCPSQUEEZE_TOKEN_FILE")
    headers = {"Authorization": f"Bearer {_read_token(token_file)}"}
    return http.client.HTTPConnection(parts.hostname, parts.port or 80, timeout=TIMEOUT), headers


def _request(method: str, path: str, body: Any = None) -> tuple[int, Any]:
    connection, headers = _connection()
    data = None if body is None else json.dumps(body).encode("utf-8")
    if data is not None:
        headers["Content-Type"] = "application/json"
    try:
        connection.request(method, path, body=data, headers=headers)
        response = connection.getresponse()
        raw = response.read()
    except OSError as exc:
        raise SqueezeSessionError(
            f"cannot reach the mcpsqueeze session ({exc}); is `mcpsqueeze serve` running?"
        ) from None
    finally:
        connection.close()
    try:
        payload = json.loads(raw) if raw else None
    except ValueError:
        message = f"the session sent HTTP {response.status} without JSON"
        raise SqueezeSessionError(message, "bad_reply", response.status) from None
    if response.status != 200:
        error = payload.get("error", {}) if isinstance(payload, dict) else {}
        message = str(error.get("message") or f"HTTP {response.status}")
        raise SqueezeSessionError(message, str(error.get("code") or "http"), response.status)
    return response.status, payload


def _text(result: dict[str, Any]) -> str:
    return "\n".join(
        block["text"]
        for block in result.get("content") or []
        if isinstance(block, dict) and block.get("type") == "text" and isinstance(block.get("text"), str)
    )


def _squeezed(result: dict[str, Any], action: str, response_id: str | None) -> Any:
    meta = result.get("_meta") or {}
    truncation = meta.get("truncation") or meta.get("mcpsqueeze/dedup")
    text = _text(result)
    try:
        data = json.loads(text)
    except ValueError:
        data = text
    if isinstance(data, dict):
        value: Any = SqueezedDict(data)
    elif isinstance(data, list):
        value = SqueezedList(data)
    elif isinstance(data, str):
        value = SqueezedText(data)
    else:
        return data  # a number, true/false or null: nothing was cut
    value.truncation = truncation
    value.response_id = response_id or (truncation or {}).get("response_id")
    value.action = action
    value.result = result
    return value


def call_tool(server: str, tool: str, arguments: dict[str, Any], full: bool = False) -> dict[str, Any]:
    """The session's whole answer: {"result": CallToolResult, "action", "response_id", ...}."""
    body = {"server": server, "tool": tool, "arguments": arguments, "full": full}
    _, payload = _request("POST", "/v1/call", body)
    return payload


def invoke(server: str, tool: str, arguments: dict[str, Any], full: bool = False) -> Any:
    """Call a tool: parsed JSON (or the text) with `.truncation`; raises SqueezeToolError for a tool error."""
    payload = call_tool(server, tool, {k: v for k, v in arguments.items() if v is not None}, full)
    result = payload.get("result") or {}
    if result.get("isError") is True:
        raise SqueezeToolError(server, tool, _text(result), result)
    return _squeezed(result, str(payload.get("action")), payload.get("response_id"))


def squeeze_recover(
    response_id: str,
    pointer: str | None = None,
    offset: int | None = None,
    length: int | None = None,
    *,
    query: str | None = None,
    lines: str | None = None,
    grep: str | None = None,
    search: str | None = None,
    ignore_case: bool | None = None,
    context: int | None = None,
    skip: int | None = None,
) -> Any:
    """The original of a shrunk or deduplicated result, one JSON node of it (RFC 6901 `pointer`), a
    JMESPath projection (`query`, e.g. "issues[].{key: key}"), a text window (`offset`, `length`), or
    exactly the lines a preview's `[lines A-B folded]` marker names (`lines`, e.g. "120-180").
    `grep` (a regular expression) or `search` (words) answer, as text, the matching lines with their
    numbers (JSON: values with their pointers), `context` lines around; `skip` pages.
    Never re-runs the tool. JSON comes back parsed; a window or lines as text, byte for byte."""
    given = (
        ("pointer", pointer), ("offset", offset), ("length", length), ("query", query), ("lines", lines),
        ("grep", grep), ("search", search), ("ignore_case", ignore_case), ("context", context), ("skip", skip),
    )
    query = {  # a flag as the query string spells it: true or false
        key: str(value).lower() if isinstance(value, bool) else str(value)
        for key, value in given
        if value is not None
    }
    path = f"/v1/recover/{urllib.parse.quote(response_id, safe='')}"
    if query:
        path += "?" + urllib.parse.urlencode(query)
    _, payload = _request("GET", path)
    text = _text(payload.get("result") or {})
    if any(value is not None for value in (offset, length, lines, grep, search)):
        return text
    try:
        return json.loads(text)
    except ValueError:
        return text
'''
