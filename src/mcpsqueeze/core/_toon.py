"""TOON rendering of JSON text results (``--toonify``): pure, text in, text out. TOON writes the JSON
data model with one header line and one row per record for uniform arrays of objects: lossless for the
data, not the bytes, so the stage stores the original first. The rules here decide whether a text is
worth rendering."""

from __future__ import annotations

import toon_format

from .._jsonbytes import NOT_JSON, parse_strict
from .._results import truncation_record
from ..shrink import RecoveryHint, Report
from ..shrink import render_call as recover_call  # one wording of the recover call for every notice

__all__ = ["MIN_SAVED_CHARS", "MIN_SAVED_SHARE", "toon_record", "toonify_text"]

#: TOON replaces a JSON text only when it saves at least this share of its characters ...
MIN_SAVED_SHARE = 0.10
#: ... and at least this many characters: below that, storing an original costs more than it saves.
MIN_SAVED_CHARS = 32


def toonify_text(text: str) -> str | None:
    """``text`` as TOON, or None when it is not a strict JSON object or array, TOON would not save enough,
    or the TOON does not decode back to the same value."""
    value = parse_strict(text)
    if value is NOT_JSON or not isinstance(value, dict | list):
        return None
    try:
        rendered = toon_format.dumps(value)
    except (TypeError, ValueError, RecursionError):
        return None
    saved = len(text) - len(rendered)
    if saved < MIN_SAVED_CHARS or saved < len(text) * MIN_SAVED_SHARE:
        return None
    try:
        same = _same(toon_format.loads(rendered), value)
    except (ValueError, RecursionError):  # ToonDecodeError is a ValueError
        return None
    return rendered if same else None


def _same(a: object, b: object) -> bool:
    """Equal in the JSON data model: numbers by value (TOON writes ``1.0`` as ``1``), but ``true`` is
    not ``1`` and ``"1"`` is not ``1`` (Python's ``==`` would let ``True == 1`` through)."""
    if isinstance(a, bool) or isinstance(b, bool) or a is None or b is None:
        return type(a) is type(b) and a == b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return type(a) is type(b) and a == b


def toon_record(original_chars: int, shown_chars: int, hint: RecoveryHint) -> dict[str, object]:
    """The ``_meta.truncation`` record of a toonified result: the same shape as a shrunk result's, so a
    client finds recovery in one place, with ``pruned: false`` (nothing was cut) and ``format: toon``; its
    message is the sentence a model reads about a result shown as TOON."""
    message = (
        f"Shown as TOON ({original_chars} chars of JSON as {shown_chars}; nothing omitted). "
        f"Original JSON, byte for byte: {recover_call(hint)}"
    )
    recipe = None if hint.file is None else hint.voice.file_recipe(hint.file)
    if hint.file is None or recipe:  # a door that offers its own way to read the file says so
        message += f"{recipe or ''}."
    else:
        message += f". File: {hint.file}"  # no full stop after a path, as in the shrink notice
    report = Report(
        pruned=False,
        fits=True,
        original_chars=original_chars,
        shown_chars=shown_chars,
        items_omitted=0,
        keys_omitted=0,
        strings_truncated=0,
        strategy="toon",
    )
    return {**truncation_record(message, hint.response_id, hint.file, report.as_dict()), "format": "toon"}
