"""``json.loads``/``json.dumps`` for the shim on the C accelerator ``_json``: importing ``json`` adds about 8
ms to each shell command (it imports ``re`` and ``enum``). The same results as the stdlib's, except that
``loads`` refuses ``NaN`` and ``Infinity``; on an error the stdlib raises its own message.
"""

from __future__ import annotations

import _json

__all__ = ["dumps", "loads"]

_WHITESPACE = " \t\n\r"


def _refuse_constant(name: str) -> object:
    raise ValueError(f"{name} is not valid JSON (only finite numbers are)")


class _Context:
    """The attributes ``_json.make_scanner`` reads (what ``json.JSONDecoder`` would carry)."""

    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float  # `float` and `int` themselves take the scanner's fast paths
    parse_int = int
    parse_constant = staticmethod(_refuse_constant)
    memo: dict[str, str] = {}  # noqa: RUF012 - the scanner's own memo; unused by the C version


_scan = _json.make_scanner(_Context())  # type: ignore[arg-type]


def _raise_like_json(text: str) -> object:
    import json  # error path only: let the stdlib say exactly what is wrong, and where

    json.loads(text)
    raise ValueError("not valid JSON")  # unreachable unless the two decoders disagree


def loads(data: str | bytes | bytearray) -> object:
    """Decode one JSON document (bytes are UTF-8); ``ValueError`` when it is not one."""
    text = data if isinstance(data, str) else bytes(data).decode("utf-8")
    n = len(text)
    start = 0
    while start < n and text[start] in _WHITESPACE:
        start += 1
    try:
        value, end = _scan(text, start)
    except (StopIteration, SystemError):
        # 3.11's scanner returns NULL without an exception for some errors (a bad key, an open
        # string) unless json.decoder was imported: let the stdlib decoder raise its own error.
        return _raise_like_json(text)
    while end < n and text[end] in _WHITESPACE:
        end += 1
    if end != n:
        return _raise_like_json(text)
    return value


def _unserialisable(value: object) -> object:
    raise TypeError(f"Object of type {value.__class__.__name__} is not JSON serializable")


def dumps(value: object, *, ensure_ascii: bool = True, allow_nan: bool = True) -> str:
    """``json.dumps(value, ensure_ascii=..., allow_nan=...)`` with the default separators (ValueError,
    TypeError as it raises them)."""
    # A fresh encoder per call, as json.dumps makes: its circular-reference markers are not
    # cleaned up when encoding fails half-way, so a shared one could refuse later values.
    encoder = _json.make_encoder(
        {},
        _unserialisable,
        _json.encode_basestring_ascii if ensure_ascii else _json.encode_basestring,
        None,  # no indent: the C encoder handles only the compact-line form
        ": ",
        ", ",
        False,  # sort_keys
        False,  # skipkeys
        allow_nan,
    )
    return "".join(encoder(value, 0))
