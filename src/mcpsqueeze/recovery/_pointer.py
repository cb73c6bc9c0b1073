"""Selecting one part of a large original by an RFC 6901 JSON pointer; errors name exactly what failed (the
segment). Pure and stdlib-only.
"""

from __future__ import annotations

import re

from mcpsqueeze._errors import RecoveryError

__all__ = ["resolve_pointer"]

_INDEX_RE = re.compile(r"^(0|[1-9][0-9]*)\Z")
_BAD_ESCAPE_RE = re.compile(r"~(?![01])")


def resolve_pointer(document: object, pointer: str) -> object:
    """Return the value ``pointer`` names inside ``document`` ("" is the whole document; any other starts
    with "/", as the recover request checks)."""
    if pointer == "":
        return document
    current = document
    walked = ""
    for raw in pointer[1:].split("/"):
        if _BAD_ESCAPE_RE.search(raw):
            raise RecoveryError(
                f"JSON pointer {pointer!r}: segment {raw!r} has a '~' not followed by 0 or 1; "
                "write '~0' for '~' and '~1' for '/'."
            )
        token = raw.replace("~1", "/").replace("~0", "~")
        here = f"{walked}/{raw}"
        if isinstance(current, dict):
            if token not in current:
                keys = ", ".join(repr(k) for k in list(current)[:10])
                more = ", ..." if len(current) > 10 else ""
                raise RecoveryError(
                    f"JSON pointer {pointer!r}: no key {token!r} at {walked or 'the root'} "
                    f"(segment {here!r}); keys there: {keys or 'none'}{more}."
                )
            current = current[token]
        elif isinstance(current, list):
            if token == "-":
                raise RecoveryError(
                    f"JSON pointer {pointer!r}: segment '-' at {walked or 'the root'} names the position "
                    f"after the last element and cannot be read; use an index from 0 to {len(current) - 1}."
                )
            if not _INDEX_RE.match(token):
                raise RecoveryError(
                    f"JSON pointer {pointer!r}: segment {here!r} must be an array index (digits without "
                    f"leading zeros) because {walked or 'the root'} is an array of {len(current)} items."
                )
            index = int(token)
            if index >= len(current):
                raise RecoveryError(
                    f"JSON pointer {pointer!r}: index {index} at {walked or 'the root'} is out of range; "
                    f"the array has {len(current)} items (0 to {len(current) - 1})."
                )
            current = current[index]
        else:
            kind = "null" if current is None else type(current).__name__
            raise RecoveryError(
                f"JSON pointer {pointer!r}: cannot apply segment {here!r} because {walked or 'the root'} "
                f"is a {kind}, not an object or array; shorten the pointer to {walked!r}."
            )
        walked = here
    return current
