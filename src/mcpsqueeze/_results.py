"""What every layer needs to know about an MCP CallToolResult, and nothing else.

A neutral module: the pipeline, the stages, the recovery store and the doors all read results, so
this sits below all of them and imports nothing of ours.
"""

from __future__ import annotations

from typing import Any

__all__ = ["Result", "text_of"]

Result = dict[str, Any]


def text_of(result: Result) -> str:
    """The text an agent reads from a result: its text blocks, joined."""
    content = result.get("content")
    if not isinstance(content, list):
        return ""
    return "\n".join(
        block["text"]
        for block in content
        if isinstance(block, dict) and block.get("type") == "text" and isinstance(block.get("text"), str)
    )
