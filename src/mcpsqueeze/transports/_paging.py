"""Reading a paged MCP listing to its end (tools/list and its cursors), whoever carries the requests."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from .._errors import BackendError
from ._correlator import error_text
from ._jsonrpc import Message

__all__ = ["MAX_PAGES", "list_tools"]

MAX_PAGES = 100  # a backend whose cursors never end is not followed forever

Ask = Callable[[str, dict[str, Any]], Awaitable[Message]]


async def list_tools(ask: Ask) -> list[dict[str, Any]]:
    """Every tool the backend lists (all pages, at most 100), as it sent them; a BackendError when it does
    not list (saying what its error answer says). `ask(method, params)` sends one request and returns its
    answer. Entries without a string name are left out: nothing could call them."""
    tools: list[dict[str, Any]] = []
    cursor = None
    for _ in range(MAX_PAGES):
        answer = await ask("tools/list", {"cursor": cursor} if cursor else {})
        result = answer.get("result")
        if not isinstance(result, dict) or not isinstance(result.get("tools"), list):
            raise BackendError(
                error_text(answer) if "error" in answer else "the backend did not list its tools"
            )
        tools += [t for t in result["tools"] if isinstance(t, dict) and isinstance(t.get("name"), str)]
        cursor = result.get("nextCursor")
        if not isinstance(cursor, str) or not cursor:
            break
    return tools
