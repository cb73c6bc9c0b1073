"""Strict JSON reading and compact JSON writing."""

from __future__ import annotations

import json
import math
import re
import threading
from typing import Final

import orjson

__all__ = ["NOT_JSON", "JsonValue", "dumps", "parse_kept", "parse_strict"]

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


_KEPT = 2  # parsed texts remembered by ``parse_kept``, each of at most ...
_KEPT_MAX_CHARS = 256 * 1024  # ... this many characters (what is held stays small)
_kept: dict[int, tuple[str, object]] = {}
_kept_lock = threading.Lock()  # (the stages parse in worker threads and on the event loop)


def parse_kept(text: str) -> object:
    """``parse_strict(text)``, remembering the last two values by the text's identity.

    The proxy reads one result's text several times in a row: the overlap stage compares it (and
    compares it again as the earlier text at the tool's next call), then the engine condenses it.
    The value is shared between callers, so they must only read it (the engine and the overlap
    comparison build new values and change none)."""
    with _kept_lock:
        found = _kept.get(id(text))
    if found is not None and found[0] is text:
        return found[1]
    value = parse_strict(text)
    if len(text) <= _KEPT_MAX_CHARS:
        with _kept_lock:
            while len(_kept) >= _KEPT:
                del _kept[next(iter(_kept))]
            _kept[id(text)] = (text, value)
    return value


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
