"""The recover tool as the MCP door offers it, on both its paths (the session relay and the stateless
frontend): appended to the last tools/list page, and its calls answered from the store, never forwarded.
And the tools/list page as the session's client should see it (``shaped_listing``)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..core import DEFAULT_PAGE_SIZE, Pipeline, SessionServices, list_recover_tool, tool_answer
from ..core._clients import ClientProfile, listed_for, may_change_structured
from ..settings import Settings
from ..transports import Message

__all__ = ["answer_recover", "recover_tool_name", "shaped_listing", "with_recover_tool"]


def recover_tool_name(settings: Settings) -> str | None:
    """The recover tool is offered when some stage can change a result: by default or by a policy."""
    keys = ("shrink", "dedup", "toonify")
    on = any(getattr(settings.policy, k) or settings.policies.may_enable(k) for k in keys)
    return "squeeze_recover" if on else None


def with_recover_tool(
    message: Message, result: dict[str, Any], current: str | None, pipelines: Iterable[Pipeline]
) -> tuple[str | None, Message]:
    """The tools/list answer with the recover tool listed, and the name it got (see list_recover_tool)."""
    name, listed = list_recover_tool(result, current, pipelines)
    return name, message if listed is result else {**message, "result": listed}


def shaped_listing(
    message: Message,
    services: SessionServices,
    pipeline: Pipeline,
    client: ClientProfile | None,
    ours: Iterable[str | None],
) -> Message:
    """A tools/list answer as the client should see it: a tool whose policy drops a duplicate
    structuredContent lists no outputSchema (a client that checks results against it would reject one
    without structuredContent), and for a client profile, ``listed_for``: every tool whose structured
    result may change without outputSchema, our own tools (``ours``) declaring their largest answer."""
    result = message.get("result")
    tools = result.get("tools") if isinstance(result, dict) else None
    lookup = pipeline.policy_for
    if lookup is None or not isinstance(tools, list):
        return message
    server = services.server_name

    def policy(name: Any) -> Any:
        return lookup(server, str(name))

    shaped = [
        {k: v for k, v in t.items() if k != "outputSchema"}
        if isinstance(t, dict) and "outputSchema" in t and policy(t.get("name")).drop_duplicate_structured
        else t
        for t in tools
    ]
    page_size = services.page_size or DEFAULT_PAGE_SIZE
    mine = [name for name in ours if name]
    shaped = listed_for(client, shaped, mine, page_size, lambda name: may_change_structured(policy(name)))
    if all(a is b for a, b in zip(shaped, tools, strict=True)):
        return message
    assert isinstance(result, dict)
    return {**message, "result": {**result, "tools": shaped}}


async def answer_recover(
    services: SessionServices, arguments: Any, *, modern: bool, client: ClientProfile | None = None
) -> dict[str, Any]:
    """The recover tool's CallToolResult; a bad request or a missing original is an error result. For a
    client profile, every answer and page fits what the client keeps of our tool (which declares its
    largest answer to a client that reads that)."""
    page_size = services.page_size
    fit = None
    if client is not None:
        fit = client.answer_limits(client.declared_size(page_size or DEFAULT_PAGE_SIZE))
    result = await services.workers.run(tool_answer, services.store, arguments, page_size, fit)
    if modern:  # a 2026-07-28 client requires the result's type
        result = {**result, "resultType": "complete"}
    return result
