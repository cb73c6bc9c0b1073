"""Strict JSON reading and compact JSON writing."""

from __future__ import annotations

import json
import math
import re
from typing import Final

import orjson

__all__ = ["NOT_JSON", "JsonValue", "dumps", "parse_strict"]

JsonValue = object

NOT_JSON: Final = object()

_SURROGATE = re.compile("[\ud800-\udfff]")
# A run of 19 or more digits, found by mapping every digit byte to "0" and every other byte to " ".
_DIGITS_ONLY = bytes(48 if 48 <= b <= 57 else 32 for b in range(256))
_LONG_RUN = b"0" * 19


def _reject_constant(name: str) -> object:
    raise ValueError(f"{name} is not JSON")


def _finite_float(text: str) -> float:
    value = float(text)
    if math.isinf(value):
        raise ValueError("number out of range")
    return value


def parse_strict(text: str) -> object:
    """The parsed value of ``text`` if it is one RFC 8259 JSON document, else ``NOT_JSON``.

    NaN/Infinity literals, numbers that overflow a double, and documents nested too deeply to walk
    all count as not JSON. Integers of any size are kept exactly: orjson reads the text unless it
    holds a run of 19 digits (it would turn a big integer into a float), the stdlib decides the rest.
    """
    stripped = text.strip(" \t\r\n")
    if not stripped or stripped[0] not in '{["-0123456789tfn':
        return NOT_JSON
    data = stripped.encode("utf-8", "surrogatepass")  # (lone surrogates: invalid UTF-8, orjson refuses)
    if _LONG_RUN not in data.translate(_DIGITS_ONLY):  # orjson would turn a long integer into a float
        try:  # orjson refuses NaN, Infinity and numbers that overflow as well, at 2-3x the stdlib's speed
            return orjson.loads(data)
        except orjson.JSONDecodeError:
            pass  # not JSON, or JSON orjson does not take (lone surrogate escapes, deep nesting)
    try:
        return json.loads(stripped, parse_constant=_reject_constant, parse_float=_finite_float)
    except (ValueError, RecursionError):
        return NOT_JSON


def _escape_surrogate(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"


def dumps(value: object) -> str:
    """Compact JSON text for ``value``; lone surrogates are written as ``\\uXXXX`` escapes.

    Always the stdlib encoder (whose C encoder is quick on previews of a budget's size), so that a
    float is written as ``repr`` writes it whatever else the value holds: the condensers size a copy
    while building it, and orjson writes some floats differently (``0.00001`` for ``1e-05``) and
    refuses integers beyond 64 bits, which would switch encoders mid-document."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return _SURROGATE.sub(_escape_surrogate, text) if _SURROGATE.search(text) else text
