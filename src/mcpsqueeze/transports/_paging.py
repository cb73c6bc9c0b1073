"""Reading a paged MCP listing to its end (tools/list and its cursors), whoever carries the requests."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from .._errors import BackendError

__all__ = ["MAX_PAGES", "list_tool_names"]

MAX_PAGES = 100  # a backend whose cursors never end is not followed forever

Ask = Callable[[str, dict[str, Any]], Awaitable[Any]]


async def list_tool_names(ask: Ask) -> list[str]:
    """Every tool name the backend lists (all pages, at most 100); an error when it does not list.

    `ask(method, params)` sends one request and returns its result."""
    names: list[str] = []
    cursor = None
    for _ in range(MAX_PAGES):
        result = await ask("tools/list", {"cursor": cursor} if cursor else {})
        if not isinstance(result, dict) or not isinstance(result.get("tools"), list):
            raise BackendError("the backend did not list its tools")
        names += [
            t["name"] for t in result["tools"] if isinstance(t, dict) and isinstance(t.get("name"), str)
        ]
        cursor = result.get("nextCursor")
        if not isinstance(cursor, str) or not cursor:
            break
    return names
