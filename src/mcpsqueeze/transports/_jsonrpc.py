"""JSON-RPC messages as lines: strict parsing, ids, and the received line an unchanged result is forwarded
with. Pure (orjson and `re`).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from .._jsonbytes import dumps, loads

__all__ = [
    "BACKEND_GONE",
    "INVALID_PARAMS",
    "INVALID_REQUEST",
    "PARSE_ERROR",
    "TIMEOUT",
    "UNREADABLE",
    "Invalid",
    "Message",
    "error_response",
    "params_of",
    "parse_line",
    "scan_id",
    "unreadable_answer",
    "valid_id",
    "with_id",
]

Message = dict[str, Any]
PARSE_ERROR = -32700
INVALID_REQUEST = -32600
INVALID_PARAMS = -32602
BACKEND_GONE = -32000  # implementation-defined server error range
TIMEOUT = -32001
UNREADABLE = -32002  # the backend's answer could not be parsed or encoded
_RAW_BYTES = 256 * 1024  # results up to this size keep their line, forwarded as is when unchanged


@dataclass(frozen=True)
class Invalid:
    """A line that is not a JSON-RPC message; travels as a value so the relay can answer it."""

    error: str
    id: Any = None


def error_response(request_id: Any, code: int, message: str, data: Any = None) -> Message:
    """A JSON-RPC error response (every error the proxy itself gives is one of these)."""
    err: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        err["data"] = data
    return {"jsonrpc": "2.0", "id": request_id, "error": err}


def unreadable_answer(request_id: Any, what: str, why: str) -> Message:
    """The error that answers a request whose answer the backend sent but nobody could parse (too deep,
    not UTF-8, not JSON-RPC): named, at once, so that no door waits for an answer it will never get."""
    return error_response(
        request_id,
        UNREADABLE,
        f"mcpsqueeze: the backend's answer to {what} could not be read ({why}); the proxy keeps "
        "serving. The backend sent something that is not valid JSON-RPC: check the server, or narrow "
        "the request.",
    )


def params_of(message: Message) -> dict[str, Any]:
    """A JSON-RPC message's params: {} when it has none (or they are not an object)."""
    params = message.get("params")
    return params if isinstance(params, dict) else {}


def valid_id(value: Any) -> bool:
    """A JSON-RPC id we can carry: a string or a number (never a bool, array, object or null)."""
    return isinstance(value, (str, int, float)) and not isinstance(value, bool)


def _id_or_none(value: Any) -> Any:
    return value if valid_id(value) else None


def parse_line(line: bytes | bytearray) -> Message | Invalid:
    """Strictly parse one JSON-RPC line; never raises. A result up to `_RAW_BYTES` keeps its line (bigger ones
    are shrunk anyway), so that it can be forwarded as is."""
    try:
        value = loads(line)
    except ValueError as exc:  # (orjson.JSONDecodeError and UnicodeDecodeError are ValueErrors)
        return Invalid(f"Parse error: {exc}", scan_id(line))
    if not isinstance(value, dict):
        return Invalid("Invalid Request: a JSON-RPC message must be a JSON object")
    request_id = _id_or_none(value.get("id"))
    if value.get("jsonrpc") != "2.0":
        return Invalid('Invalid Request: "jsonrpc" must be "2.0"', request_id)
    if "method" in value and not isinstance(value["method"], str):
        return Invalid('Invalid Request: "method" must be a string', request_id)
    if "method" not in value and "result" not in value and "error" not in value:
        return Invalid("Invalid Request: neither a request, a notification nor a response", request_id)
    if "id" in value and request_id is None and ("method" in value or value["id"] is not None):
        # null is allowed only in an error response that could not tell which request it answers
        return Invalid('Invalid Request: "id" must be a string or a number')
    if len(line) <= _RAW_BYTES and "result" in value and "method" not in value:
        return _Received(value, bytes(line.strip()))
    return value


_TOKEN = re.compile(rb'"(?:[^"\\]|\\.)*"|[\[\]{},:]')
_SCALAR = re.compile(rb'\s*(-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|"(?:[^"\\]|\\.)*")\s*[,}]')


def scan_id(line: bytes | bytearray) -> Any:
    """The top-level "id" of a line too broken (or too deep) to parse, when it can be told; else None. One
    linear pass over strings and brackets, so a reply nested 100,000 deep is still answered to its request."""
    depth = 0
    expect_key = False
    for match in _TOKEN.finditer(line):
        token = match.group()
        if token in (b"{", b"["):
            if depth == 0 and token != b"{":
                return None
            depth += 1
            expect_key = depth == 1
        elif token in (b"}", b"]"):
            depth -= 1
            if depth <= 0:
                return None
        elif token == b",":
            expect_key = depth == 1
        elif token == b":":
            pass
        elif expect_key:
            expect_key = False
            if token == b'"id"':
                rest = line[match.end() :]
                colon = rest.lstrip()[:1]
                if colon != b":":
                    return None
                value = _SCALAR.match(rest, rest.index(b":") + 1)
                if value is None:
                    return None
                try:
                    return _id_or_none(json.loads(value.group(1)))
                except ValueError:
                    return None
        elif depth == 0:
            return None
    return None


class _Received(dict[str, Any]):
    """A message as parsed, with the line it came from: forwarded unchanged (the same top-level values, by
    identity, at send time), it goes out byte for byte and costs no serialisation. A new id (``with_id``)
    is spliced into the line only when it is sent."""

    __slots__ = ("_id_from", "_line", "_values")

    def __init__(self, value: Message, line: bytes, id_from: Any = None) -> None:
        super().__init__(value)
        self._line = line
        self._values = tuple(map(id, value.values()))
        self._id_from = id_from  # (old id,) when the line still carries the old id's value

    def line_if_unchanged(self) -> bytes | None:
        if len(self) != len(self._values) or tuple(map(id, self.values())) != self._values:
            return None
        if self._id_from is None:
            return self._line
        span = _id_span(self._line, self._id_from[0])
        if span is None:  # the id cannot be located for certain in the line: re-serialised
            return None
        start, end = span
        return self._line[:start] + dumps(self["id"]) + self._line[end:]


# The top-level "id" of a compact response, where the SDKs put it: first (after "jsonrpc", Python's
# pydantic) or last (TypeScript's JSON.stringify of {result, jsonrpc, id}). Only integer ids: the relay
# gives the backend its own (1, 2, 3...), and a backend's answer carries one of them.
_HEAD_ID = re.compile(rb'\{\s*(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?"id"\s*:\s*(-?\d+)\s*[,}]')
_TAIL_ID = re.compile(rb',\s*"id"\s*:\s*(-?\d+)\s*\}$')
_EDGE = 64  # bytes at either end of the line the patterns look at


def _id_span(line: bytes, expected: int) -> tuple[int, int] | None:
    """Where the value of the top-level "id" member (equal to ``expected``) is in ``line``: at the
    head only when no other ``"id"`` key (nor an escaped spelling of one) is in the line, or at the tail,
    the top-level object's last member (the one parsers keep)."""
    head = _HEAD_ID.match(line, 0, _EDGE)
    if (
        head is not None
        and int(head.group(1)) == expected
        and line.count(b'"id"') == 1
        and b"\\u0069" not in line
        and b"\\u0064" not in line
    ):
        return head.span(1)
    offset = max(0, len(line) - _EDGE)
    tail = _TAIL_ID.search(line, offset)
    if tail is not None and int(tail.group(1)) == expected:
        return tail.span(1)
    return None


def with_id(message: Message, new_id: Any) -> Message:
    """``{**message, "id": new_id}``; a received result with an integer id, not yet renumbered, keeps its
    line (only the id's bytes change, spliced when sent), so forwarded unchanged it is still not
    re-serialised."""
    if type(message) is _Received and message._id_from is None and type(message.get("id")) is int:
        return _Received({**message, "id": new_id}, message._line, (message["id"],))
    return {**message, "id": new_id}


def line_of(message: Message) -> bytes:
    if type(message) is _Received:
        line = message.line_if_unchanged()
        if line is not None:
            return line + b"\n"
    return dumps(message) + b"\n"
