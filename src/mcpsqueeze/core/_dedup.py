"""Dedup: recognise a result already shown in this session and render the pointer that replaces it.
Pure: hashing and rendering; the stage (`_stages.py`) decides and stores."""

from __future__ import annotations

import hashlib
from typing import Any

from .._jsonbytes import dumps

__all__ = ["content_digest", "render_overlap", "render_pointer"]


def content_digest(content: Any) -> str:
    """SHA-256 over a canonical form (sorted keys, compact) of a result's content blocks."""
    return hashlib.sha256(dumps(content, sort_keys=True)).hexdigest()


def render_pointer(
    *, number: int, tool: str, tokens: int | None, chars: int, response_id: str, how_to_recover: str
) -> str:
    """The text shown instead of a repeated result (golden-tested). It states the o200k tokens not resent
    when they are counted already (the very figure the stats record for the call), else the characters:
    never an estimate, so no number here disagrees with the stats."""
    amount = f"{tokens} tokens" if tokens is not None else f"{chars} characters"
    return (
        f"[mcpsqueeze] identical to the result of call #{number} ({tool}), {amount} not resent. "
        f"The tool did run again and returned exactly the same content. {how_to_recover}"
    )


def render_overlap(
    *,
    number: int,
    tool: str,
    kind: str,
    unchanged: int,
    total: int,
    chars: int,
    how_to_recover: str,
    base_hint: str | None = None,
) -> str:
    """The line shown above the delta of a result that largely repeats an earlier one (golden-tested):
    `chars` are the characters of the result not resent (its own, less the delta's), exactly."""
    what = "lines" if kind == "text" else "members"
    shape = "a unified diff" if kind == "text" else "JSON pointers of the members added, removed and changed"
    recover = how_to_recover.replace("To see it again", "To see this result in full")
    return (
        f"[mcpsqueeze] largely the same as the result of call #{number} ({tool}): {unchanged} of {total} "
        f"{what} unchanged, {chars} characters not resent. The tool did run again; below is what changed "
        f"since call #{number}, as {shape}. {recover}"
    ) + (
        ""
        if base_hint is None
        else f" Call #{number}'s result was shown shrunk; "
        + base_hint.replace("To see it again", "to read all of it")
    )
