"""What every layer needs to know about an MCP CallToolResult, below them all (imports nothing of ours)."""

from __future__ import annotations

import json
from typing import Any

__all__ = ["Result", "duplicates_text", "text_blocks", "text_chars", "text_of", "truncation_record"]

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
    content, indexes = text_blocks(result)
    return sum(len(content[i]["text"]) for i in indexes)


def truncation_record(message: str, response_id: str, file: str | None, report: Any) -> dict[str, Any]:
    """The ``_meta.truncation`` record of a changed result: what was done (``message``, ``report``) and
    where its original is (``file`` only when there is one), in the order every door shows it."""
    record: dict[str, Any] = {"message": message, "response_id": response_id}
    if file:
        record["original_response_file"] = file
    record["report"] = report
    return record


def duplicates_text(result: Result) -> bool:
    """Whether the result's structuredContent repeats its text: the same JSON value, or an object whose
    one member is the text itself (`{"content": text}` of server-filesystem, `{"result": text}` of
    MCPServer's `-> str` tools)."""
    if "structuredContent" not in result:
        return False
    structured = result["structuredContent"]
    text = text_of(result)
    if isinstance(structured, dict) and len(structured) == 1 and next(iter(structured.values())) == text:
        return True
    try:
        return bool(json.loads(text) == structured)
    except (ValueError, RecursionError):
        return False
