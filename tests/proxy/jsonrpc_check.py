"""The invariant every line the proxy writes must meet: RFC 8259 JSON and a well-formed JSON-RPC 2.0 message.

Written apart from the proxy's own parser (and importing nothing of it), so a bug there cannot hide here.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

import orjson

__all__ = ["check_jsonrpc", "strict_loads", "valid_id"]


def strict_loads(line: bytes) -> Any:
    """RFC 8259 JSON or an exception: strict UTF-8, no NaN/Infinity, no number overflowing to infinity.

    orjson (strict, 1,024 levels) unless there are big integers or lone surrogate escapes, which the stdlib
    reads exactly.
    """
    if not re.search(rb"\d{19,}|\\u[dD][89abAB]", line):
        return orjson.loads(line)

    def no_constant(name: str) -> Any:
        raise ValueError(f"{name} is not JSON")

    def finite(text: str) -> float:
        value = float(text)
        if math.isinf(value):
            raise ValueError(f"{text} overflows")
        return value

    return json.loads(line.decode("utf-8"), parse_constant=no_constant, parse_float=finite)


def valid_id(value: Any) -> bool:
    return isinstance(value, (str, int, float)) and not isinstance(value, bool)


def check_jsonrpc(line: bytes) -> dict[str, Any]:
    """One line the relay wrote: valid JSON and a valid JSON-RPC 2.0 message (raises AssertionError)."""
    message = strict_loads(line)
    assert isinstance(message, dict), line[:200]
    assert message.get("jsonrpc") == "2.0", line[:200]
    if "method" in message:
        assert isinstance(message["method"], str)
        if "id" in message:
            assert valid_id(message["id"]), line[:200]
    else:
        assert "id" in message and (valid_id(message["id"]) or message["id"] is None), line[:200]
        assert ("result" in message) != ("error" in message), line[:200]
        if "error" in message:
            assert isinstance(message["error"].get("code"), int)
            assert isinstance(message["error"].get("message"), str)
    return message
