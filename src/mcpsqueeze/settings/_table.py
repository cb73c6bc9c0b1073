"""The table of settings, assembled: every knob of `Policy` then of `Settings`, in that order (the order
`mcpsqueeze config` prints them), and the one check of a library keyword (`Squeezer`, `shrink_tools`,
`Client`). The rows themselves are the fields of `Policy` and `Settings` (settings/_knobs.py)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .._errors import UsageError
from ._knobs import Knob, rows
from ._policy import Policy
from ._settings import Settings

__all__ = ["KNOBS", "POLICY_KNOBS", "check_keywords", "knob_named", "library_defaults"]

POLICY_KNOBS: tuple[Knob, ...] = tuple(rows(Policy))  # also `[policies]` keys, resolved per call
KNOBS: tuple[Knob, ...] = POLICY_KNOBS + tuple(rows(Settings))
_BY_NAME = {row.name: row for row in KNOBS}


def knob_named(name: str) -> Knob:
    return _BY_NAME[name]


def library_defaults(door: str) -> dict[str, Any]:
    """The defaults of one library door (`squeezer` or `client`), where they differ from the CLI's."""
    return {row.name: row.library_default() for row in KNOBS if door in row.doors}


def check_keywords(door: str, given: Mapping[str, Any]) -> dict[str, Any]:
    """The keywords given to a library door, checked by their rows: None means not given (dropped);
    an unknown keyword, a wrong type or a value out of bounds is a UsageError naming the keyword."""
    checked: dict[str, Any] = {}
    for name, value in given.items():
        row = _BY_NAME.get(name)
        if row is None or door not in row.doors:
            import difflib

            known = [r.name for r in KNOBS if door in r.doors]
            close = difflib.get_close_matches(name, known, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else f"; the settings are: {', '.join(known)}"
            raise UsageError(f"unknown setting {name!r}{hint}")
        if value is None:
            continue
        if value == 0 and row.name == "truncate_chars" and not isinstance(value, bool):
            value = False  # the library's spelling of "no per-block cap"
        try:
            checked[name] = row.kind.check(value)
        except ValueError as exc:
            raise UsageError(f"{name} {exc}") from None
    return checked
