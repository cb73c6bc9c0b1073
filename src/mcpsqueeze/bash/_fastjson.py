"""``json.loads``/``json.dumps`` for the shim, straight on the C accelerator ``_json``.

``import json`` costs several milliseconds of the shim's budget (it pulls in ``re``, and ``re`` pulls
in ``enum``), while the C scanner and encoder it wraps load in a fraction of one. These two
functions give the same results as the stdlib's for everything the shim handles, with one
deliberate difference: ``loads`` refuses ``NaN`` and ``Infinity`` (they are not JSON, and no server
sends them). ``dumps(..., allow_nan=False)`` refuses non-finite floats, for what goes over the
wire. On a decoding error the stdlib ``json`` is imported to raise its own ``JSONDecodeError``, so
the messages stay the same.
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
    """``json.dumps(value, ensure_ascii=..., allow_nan=...)`` with the default separators.

    Raises ``ValueError`` for circular references and (with ``allow_nan=False``) non-finite floats,
    ``TypeError`` for anything that is not a dict, list, tuple, str, int, float, bool or None.
    """
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
