"""JSON to and from bytes, fast (orjson) yet exact for everything valid JSON can hold.

orjson refuses lone surrogates (valid as `\\ud800` escapes) and turns integers beyond 64 bits into floats.
Both are rare, so they take the stdlib path: on reading, when orjson fails or a long digit run is present;
on writing, when orjson refuses, with ASCII escapes so the bytes stay valid UTF-8.
"""

from __future__ import annotations

import json
import re
from typing import Any

import orjson

__all__ = ["dumps", "loads"]

_LONG_NUMBER = re.compile(rb"\d{19,}")


def dumps(value: Any, *, sort_keys: bool = False) -> bytes:
    """Compact JSON bytes; key order kept unless `sort_keys` (the canonical form for hashing)."""
    try:
        return orjson.dumps(value, option=orjson.OPT_SORT_KEYS if sort_keys else None)
    except TypeError:  # orjson.JSONEncodeError: big integers, lone surrogates
        return json.dumps(value, sort_keys=sort_keys, separators=(",", ":")).encode("ascii")


def loads(data: bytes) -> Any:
    """Parse JSON bytes; raises ValueError (or RecursionError for absurd nesting) on invalid input."""
    if _LONG_NUMBER.search(data) is None:
        try:
            return orjson.loads(data)
        except orjson.JSONDecodeError:
            pass  # maybe a lone surrogate escape, which the stdlib accepts; otherwise it fails again below
    return json.loads(data)
