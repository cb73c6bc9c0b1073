"""The one strict JSON module: JSON to and from bytes and text, fast (orjson) yet exact and strict (RFC 8259).
What orjson refuses or bends (lone surrogate escapes, integers beyond 64 bits, nesting past 254 on writing)
takes the stdlib path, still strictly (strict UTF-8, no NaN/Infinity, no overflow to infinity; ASCII
escapes on writing; no recursion past the stdlib's depth).
"""

from __future__ import annotations

import json
import json.decoder
import math
import os
import re
import threading
from typing import Any, Final

import orjson

__all__ = [
    "MAX_DEPTH",
    "NOT_JSON",
    "dumps",
    "dumps_text",
    "loads",
    "loads_text",
    "parse_kept",
    "parse_strict",
]

MAX_DEPTH = 1024  # orjson's parse limit (the stdlib's is near 1,000); deeper input gets a clear error
_TOO_DEEP = "JSON nested deeper than this proxy parses (about 1,000 levels)"
# A run of 19 or more digits (a number orjson may turn into a float), found by mapping every digit to
# "0" and everything else to " ": one C-speed pass, far faster than a regular expression.
_DIGITS_ONLY = bytes(48 if 48 <= b <= 57 else 32 for b in range(256))
_LONG_RUN = b"0" * 19
_SCAN = 1 << 20  # bytes mapped at once: the digit map of a 100 MB line is never made whole


def dumps(value: Any, *, sort_keys: bool = False) -> bytes:
    """Compact JSON bytes, key order kept unless `sort_keys` (the canonical form for hashing); ValueError for
    what JSON cannot hold, TypeError for non-JSON types."""
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
    # The stack holds values still to write, and the literal text (keys, commas, closers) between them.
    stack: list[Any] = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, _Literal):
            out.append(item)
            continue
        if isinstance(item, dict):
            keys = sorted(item) if sort_keys else list(item)
            for key in keys:
                if not isinstance(key, str):
                    raise TypeError(f"keys must be str, not {type(key).__name__}")
            pairs = [(("," if i else "") + json.dumps(key) + ":", item[key]) for i, key in enumerate(keys)]
            brackets = "{}"
        elif isinstance(item, (list, tuple)):
            pairs = [("," if i else "", element) for i, element in enumerate(item)]
            brackets = "[]"
        else:  # a scalar (or what JSON cannot hold: the stdlib's error)
            out.append(json.dumps(item, allow_nan=False))
            continue
        out.append(brackets[0])
        stack.append(_Literal(brackets[1]))
        for text, child in reversed(pairs):
            stack += (child, _Literal(text))
    return "".join(out).encode("ascii")


class _Literal(str):
    """JSON text written as it is (a key and its colon, a comma, a closer), not as a string value."""


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON (RFC 8259 has no NaN or Infinity)")


def _finite_float(text: str) -> float:
    number = float(text)
    if math.isinf(number):
        raise ValueError(f"number {text[:40]} is out of range (it would be infinity)")
    return number


def _has_long_digit_run(data: bytes | bytearray) -> bool:
    """A run of 19 or more digits anywhere in `data`, mapped `_SCAN` bytes at a time (windows overlap by
    18 bytes, so a run across two windows is found)."""
    overlap = len(_LONG_RUN) - 1
    return any(
        _LONG_RUN in data[max(0, start - overlap) : start + _SCAN].translate(_DIGITS_ONLY)
        for start in range(0, len(data), _SCAN)
    )


# Huge lines: orjson (yyjson) copies its input before parsing, so a line would be held three times at
# once (the line, the copy, the parsed text). A line of
# `_LEAN_ABOVE` bytes or more whose big string literals (`_LEAN_STRING` bytes or more) have no escape is
# parsed without them: each is decoded straight from the line (strict UTF-8, no control character, as
# JSON asks), the rest is parsed with a placeholder in its place; the peak is the line plus its text.
_LEAN_ABOVE = 8 << 20
_LEAN_STRING = 1 << 20
_LEAN_QUOTES = 4096  # string literals looked at before giving up (big ones come first in a tools/call result)
_LEAN_SKELETON = 1 << 20  # bytes: what is left must be small, or the ordinary parse is as good
_CONTROL = re.compile(rb"[\x00-\x1f]")


def _big_literals(data: bytes | bytearray) -> list[tuple[int, int]]:
    """(start, end) of the contents of big escape-free string literals, in order (an empty list: none,
    or more quotes than `_LEAN_QUOTES` looked at: the ordinary parse then)."""
    found: list[tuple[int, int]] = []
    pos = 0
    budget = _LEAN_QUOTES
    while budget > 0:
        start = data.find(b'"', pos)
        if start < 0:
            break
        end = data.find(b'"', start + 1)
        while end > 0 and budget > 0:
            budget -= 1
            before = end - 1
            while data[before] == 0x5C:  # backslashes: an odd number escapes the quote
                before -= 1
            if (end - 1 - before) % 2 == 0:
                break
            end = data.find(b'"', end + 1)
        if end < 0 or budget <= 0:
            return []
        if end - start - 1 >= _LEAN_STRING and data.find(b"\\", start + 1, end) < 0:
            found.append((start + 1, end))
        pos = end + 1
    return found


def _loads_lean(data: bytes | bytearray, literals: list[tuple[int, int]]) -> Any:
    nonce = os.urandom(8).hex()
    view = memoryview(data)
    skeleton: list[bytes] = []
    texts: dict[str, str] = {}
    previous = 0
    for index, (start, end) in enumerate(literals):
        if _CONTROL.search(data, start, end) is not None:
            raise ValueError("Invalid control character in a string")
        key = f"mcpsqueeze-lean-{nonce}-{index}"
        skeleton += (bytes(view[previous:start]), key.encode())
        texts[key] = str(view[start:end], "utf-8")  # strict; decoded from the line itself, no copy of it
        previous = end
    skeleton.append(bytes(view[previous:]))
    view.release()
    value = loads(b"".join(skeleton))
    if isinstance(value, str):
        return texts.get(value, value)
    if _put_back(value, texts) != len(texts):  # one was an object key: the ordinary parse does that
        return _NOT_LEAN
    return value


_NOT_LEAN = object()


def _put_back(value: Any, texts: dict[str, str]) -> int:
    """Replace each placeholder string value by its text (an explicit stack: any depth); how many."""
    done = 0
    stack = [value]
    while stack:
        node = stack.pop()
        if not isinstance(node, (dict, list)):
            continue
        items = node.items() if isinstance(node, dict) else enumerate(node)
        for key, item in list(items):
            if isinstance(item, str):
                if item in texts:
                    node[key] = texts[item]
                    done += 1
            elif isinstance(item, (dict, list)):
                stack.append(item)
    return done


def loads(data: bytes | bytearray | str) -> Any:
    """Parse JSON strictly (RFC 8259); raises ValueError on invalid input, nesting beyond MAX_DEPTH
    included. Lone surrogate escapes (`"\\ud800"`) are valid JSON and accepted, and so are lone
    surrogates in a text already decoded; surrogate bytes are not."""
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
    if len(raw) >= _LEAN_ABOVE:
        literals = _big_literals(raw)
        if literals and len(raw) - sum(end - start for start, end in literals) <= _LEAN_SKELETON:
            value = _loads_lean(raw, literals)
            if value is not _NOT_LEAN:
                return value
    if not _has_long_digit_run(raw):
        try:
            return orjson.loads(raw)
        except orjson.JSONDecodeError as exc:
            if "depth limit" in str(exc):
                raise ValueError(_TOO_DEEP) from None
            # maybe a lone surrogate escape, which the stdlib accepts; otherwise it fails again below
    text = data if isinstance(data, str) else raw.decode("utf-8")  # strict: invalid UTF-8 is an error
    try:
        return json.loads(text, parse_constant=_refuse_constant, parse_float=_finite_float)
    except RecursionError:
        raise ValueError(_TOO_DEEP) from None


def loads_text(text: str) -> Any:
    """`loads` of JSON already decoded, on the stdlib parser: it holds the text and what it parses to,
    about twice the text, where orjson's buffers take many times their input (a recovery of a big
    original: core/_recover.py). Strict as `loads`; nesting past the stdlib's ~1,000 levels goes there."""
    try:
        return json.loads(text, parse_constant=_refuse_constant, parse_float=_finite_float)
    except RecursionError:
        return loads(text.encode("utf-8"))


#: What `parse_strict` gives for a text that is not one JSON document.
NOT_JSON: Final = object()


def parse_strict(text: str) -> object:
    """The parsed value of ``text`` if it is one RFC 8259 JSON document, else ``NOT_JSON``."""
    stripped = text.strip(" \t\r\n")
    if not stripped or stripped[0] not in '{["-0123456789tfn':
        return NOT_JSON
    try:
        return loads(stripped)
    except ValueError:
        return NOT_JSON


_KEPT = 2  # parsed texts remembered by ``parse_kept``, each of at most ...
_KEPT_MAX_CHARS = 256 * 1024  # ... this many characters (what is held stays small)
_kept: dict[int, tuple[str, object]] = {}
_kept_lock = threading.Lock()  # (the stages parse in worker threads and on the event loop)


def parse_kept(text: str) -> object:
    """``parse_strict(text)``, remembering the last two values by the text's identity: the overlap
    stage and the engine read one result's text in a row. The value is shared, so callers only read it."""
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


_SURROGATE = re.compile("[\ud800-\udfff]")


def dumps_text(value: object) -> str:
    """Compact JSON text; lone surrogates written as ``\\uXXXX`` escapes. Always the stdlib encoder, so
    a float is written as ``repr`` writes it (the condensers size a copy while building it; orjson writes
    some floats differently and refuses integers beyond 64 bits)."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    if not _SURROGATE.search(text):
        return text
    return _SURROGATE.sub(lambda match: f"\\u{ord(match.group()):04x}", text)
