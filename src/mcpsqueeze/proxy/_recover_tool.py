"""The recover tool as the MCP door offers it, on both its paths (the session relay and the stateless
frontend): appended to the last tools/list page, and its calls answered from the store, never forwarded."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..core import Pipeline, SessionServices, list_recover_tool, tool_answer
from ..transports import Message

__all__ = ["answer_recover", "with_recover_tool"]


def with_recover_tool(
    message: Message, result: dict[str, Any], current: str | None, pipelines: Iterable[Pipeline]
) -> tuple[str | None, Message]:
    """The tools/list answer with the recover tool listed, and the name it got (see list_recover_tool)."""
    name, listed = list_recover_tool(result, current, pipelines)
    return name, message if listed is result else {**message, "result": listed}


async def answer_recover(services: SessionServices, arguments: Any, *, modern: bool) -> dict[str, Any]:
    """The recover tool's CallToolResult; a bad request or a missing original is an error result."""
    result = await services.workers.run(tool_answer, services.store, arguments, services.page_size)
    if modern:  # a 2026-07-28 client requires the result's type
        result = {**result, "resultType": "complete"}
    return result
