"""Dedup: recognise a result already shown in this session and render the pointer that replaces it.

Pure: hashing and rendering only; the stage in `stages.py` decides and stores.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

import orjson

__all__ = ["content_digest", "render_pointer"]


def content_digest(content: Any) -> str:
    """SHA-256 over a canonical form (sorted keys, compact) of a result's content blocks."""
    try:
        canonical = orjson.dumps(content, option=orjson.OPT_SORT_KEYS)
    except TypeError:  # integers beyond 64 bits
        canonical = json.dumps(content, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode(
            "utf-8", "surrogatepass"
        )
    return hashlib.sha256(canonical).hexdigest()


def render_pointer(
    *, number: int, tool: str, tokens: int, approximate: bool, response_id: str, how_to_recover: str
) -> str:
    """The text shown instead of a repeated result (golden-tested)."""
    amount = f"~{tokens}" if approximate else str(tokens)
    return (
        f"[mcpsqueeze] identical to the result of call #{number} ({tool}), {amount} tokens not resent. "
        f"The tool did run again and returned exactly the same content. {how_to_recover}"
    )


def recover_hint(response_id: str, *, recover_tool: str | None) -> str:
    """How to bring a pointer's content back, in MCP mode (a tool) or shell mode (the shim)."""
    if recover_tool is not None:
        return f'To see it again, call {recover_tool} with {{"response_id": "{response_id}"}}.'
    return f"To see it again, run: mcpsq recover {response_id}"
