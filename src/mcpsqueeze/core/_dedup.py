"""Dedup: recognise a result already shown in this session and render the pointer that replaces it.

Pure: hashing and rendering only; the stage in `stages.py` decides and stores.
"""

from __future__ import annotations

import hashlib
from typing import Any

from .._jsonbytes import dumps

__all__ = ["content_digest", "render_overlap", "render_pointer"]


def content_digest(content: Any) -> str:
    """SHA-256 over a canonical form (sorted keys, compact) of a result's content blocks."""
    return hashlib.sha256(dumps(content, sort_keys=True)).hexdigest()


def render_pointer(
    *, number: int, tool: str, tokens: int, approximate: bool, response_id: str, how_to_recover: str
) -> str:
    """The text shown instead of a repeated result (golden-tested)."""
    amount = f"~{tokens}" if approximate else str(tokens)
    return (
        f"[mcpsqueeze] identical to the result of call #{number} ({tool}), {amount} tokens not resent. "
        f"The tool did run again and returned exactly the same content. {how_to_recover}"
    )


def render_overlap(
    *,
    number: int,
    tool: str,
    kind: str,
    unchanged: int,
    total: int,
    tokens: int,
    how_to_recover: str,
    base_hint: str | None = None,
) -> str:
    """The line shown above the delta of a result that largely repeats an earlier one (golden-tested)."""
    what = "lines" if kind == "text" else "members"
    shape = "a unified diff" if kind == "text" else "JSON pointers of the members added, removed and changed"
    recover = how_to_recover.replace("To see it again", "To see this result in full")
    return (
        f"[mcpsqueeze] largely the same as the result of call #{number} ({tool}): {unchanged} of {total} "
        f"{what} unchanged, ~{tokens} tokens not resent. The tool did run again; below is what changed "
        f"since call #{number}, as {shape}. {recover}"
    ) + (
        ""
        if base_hint is None
        else f" Call #{number}'s result was shown shrunk; "
        + base_hint.replace("To see it again", "to read all of it")
    )
