"""JSON to and from bytes, fast (orjson) yet exact and strict (RFC 8259) for everything valid JSON can hold.

orjson refuses lone surrogates (valid as `\\ud800` escapes), turns integers beyond 64 bits into floats, and
writes only 254 levels of nesting. Those rare cases take the stdlib path: on reading, when orjson fails or a
long digit run is present, still strictly (strict UTF-8, no NaN/Infinity, no number overflowing to
infinity); on writing, when orjson refuses, with ASCII escapes so the bytes stay valid UTF-8, and without
recursion when the nesting is deeper than the stdlib encoder can go.
"""

from __future__ import annotations

import json
import json.decoder
import math
from typing import Any

import orjson

__all__ = ["MAX_DEPTH", "dumps", "loads"]

MAX_DEPTH = 1024  # orjson's parse limit (the stdlib's is near 1,000); deeper input gets a clear error
_TOO_DEEP = "JSON nested deeper than this proxy parses (about 1,000 levels)"
# A run of 19 or more digits (a number orjson may turn into a float), found by mapping every digit to
# "0" and everything else to " ": a C-speed pass, where the regex ``\d{19,}`` took 2 ms per 200 KB.
_DIGITS_ONLY = bytes(48 if 48 <= b <= 57 else 32 for b in range(256))
_LONG_RUN = b"0" * 19
_encode_str = json.encoder.encode_basestring_ascii


def dumps(value: Any, *, sort_keys: bool = False) -> bytes:
    """Compact JSON bytes; key order kept unless `sort_keys` (the canonical form for hashing).

    Raises ValueError for what JSON cannot hold (NaN, infinities), TypeError for non-JSON types.
    """
    try:
        return orjson.dumps(value, option=orjson.OPT_SORT_KEYS if sort_keys else None)
    except TypeError:  # orjson.JSONEncodeError: big integers, lone surrogates, nesting beyond 254
        pass
    try:
        return json.dumps(value, sort_keys=sort_keys, separators=(",", ":"), allow_nan=False).encode("ascii")
    except RecursionError:
        return _dumps_flat(value, sort_keys)


def _dumps_flat(value: Any, sort_keys: bool) -> bytes:
    """The stdlib's output, built with an explicit stack: any depth, no recursion limit."""
    out: list[str] = []
    # The stack holds values still to write, and the literal closers/separators between them.
    stack: list[Any] = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, _Literal):
            out.append(item.text)
        elif isinstance(item, str):
            out.append(_encode_str(item))
        elif item is None:
            out.append("null")
        elif item is True:
            out.append("true")
        elif item is False:
            out.append("false")
        elif isinstance(item, int):
            out.append(int.__repr__(item))
        elif isinstance(item, float):
            if math.isnan(item) or math.isinf(item):
                raise ValueError(f"Out of range float values are not JSON compliant: {item!r}")
            out.append(float.__repr__(item))
        elif isinstance(item, dict):
            keys = sorted(item) if sort_keys else list(item)
            parts: list[Any] = []
            for i, key in enumerate(keys):
                if not isinstance(key, str):
                    raise TypeError(f"keys must be str, not {type(key).__name__}")
                parts.append(_Literal(("," if i else "") + _encode_str(key) + ":"))
                parts.append(item[key])
            out.append("{")
            stack.append(_CLOSE_OBJECT)
            stack.extend(reversed(parts))
        elif isinstance(item, (list, tuple)):
            parts = []
            for i, element in enumerate(item):
                if i:
                    parts.append(_COMMA)
                parts.append(element)
            out.append("[")
            stack.append(_CLOSE_ARRAY)
            stack.extend(reversed(parts))
        else:
            raise TypeError(f"Object of type {type(item).__name__} is not JSON serializable")
    return "".join(out).encode("ascii")


class _Literal:
    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text


_COMMA = _Literal(",")
_CLOSE_OBJECT = _Literal("}")
_CLOSE_ARRAY = _Literal("]")


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON (RFC 8259 has no NaN or Infinity)")


def _finite_float(text: str) -> float:
    number = float(text)
    if math.isinf(number):
        raise ValueError(f"number {text[:40]} is out of range (it would be infinity)")
    return number


def loads(data: bytes) -> Any:
    """Parse JSON bytes strictly (RFC 8259); raises ValueError on invalid input, nesting beyond MAX_DEPTH
    included. Lone surrogate escapes (`"\\ud800"`) are valid JSON and accepted; surrogate bytes are not."""
    if _LONG_RUN not in data.translate(_DIGITS_ONLY):
        try:
            return orjson.loads(data)
        except orjson.JSONDecodeError as exc:
            if "depth limit" in str(exc):
                raise ValueError(_TOO_DEEP) from None
            # maybe a lone surrogate escape, which the stdlib accepts; otherwise it fails again below
    text = data.decode("utf-8")  # strict: invalid UTF-8 and encoded surrogates are errors (ValueError)
    try:
        return json.loads(text, parse_constant=_refuse_constant, parse_float=_finite_float)
    except RecursionError:
        raise ValueError(_TOO_DEEP) from None
