"""What every layer needs to know about an MCP CallToolResult, below them all (imports nothing of ours)."""

from __future__ import annotations

from typing import Any

__all__ = ["Result", "text_blocks", "text_chars", "text_of"]

Result = dict[str, Any]


def text_blocks(result: Result) -> tuple[list[Any], list[int]]:
    """The result's content list and the indexes of its text blocks (both empty when it has none)."""
    content = result.get("content")
    if not isinstance(content, list):
        return [], []
    indexes = [
        i
        for i, b in enumerate(content)
        if isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str)
    ]
    return content, indexes


def text_of(result: Result) -> str:
    """The text an agent reads from a result: its text blocks, joined."""
    content, indexes = text_blocks(result)
    return "\n".join(content[i]["text"] for i in indexes)


def text_chars(result: Result) -> int:
    """The characters of a result's texts, summed: a cheap size (no joining, no serialising) for
    deciding where its work runs."""
    content = result.get("content")
    if not isinstance(content, list):
        return 0
    size = 0
    for block in content:
        if isinstance(block, dict):
            text = block.get("text")
            if isinstance(text, str):
                size += len(text)
    return size
