"""Streamable-HTTP MCP server exposing what `@modelcontextprotocol/conformance server` probes.

The conformance suite calls fixed tool/resource/prompt names (test_simple_text, test://static-text,
test_simple_prompt, ...). This server provides them with the mcp 2.x SDK (`MCPServer`), bound to
127.0.0.1 only. It is a backend for conformance runs: directly, and behind the proxy.

    python tests/conformance/everything_server.py --port 0    # prints "LISTENING http://127.0.0.1:PORT/mcp"

Not a test module (no test_ prefix): pytest does not collect it.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import json
import logging
import socket
import sys
from typing import Any

from mcp.server import MCPServer, ServerRequestContext
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.prompts.base import UserMessage
from mcp.server.streamable_http import EventCallback, EventMessage, EventStore
from mcp.types import (
    AudioContent,
    Completion,
    CompletionArgument,
    CompletionContext,
    EmbeddedResource,
    EmptyResult,
    ImageContent,
    InputRequiredResult,
    PromptReference,
    ResourceTemplateReference,
    SamplingMessage,
    SetLevelRequestParams,
    SubscribeRequestParams,
    TextContent,
    TextResourceContents,
    UnsubscribeRequestParams,
)
from pydantic import BaseModel, Field

log = logging.getLogger("conformance-everything")

# 1x1 PNG and a tiny WAV header: the payloads the conformance checks expect to be valid base64.
PNG_1X1 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
WAV_TINY = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA="


class MemoryEventStore(EventStore):
    """Keeps every SSE event so a client reconnecting with Last-Event-ID gets the rest (SEP-1699)."""

    def __init__(self) -> None:
        self._events: list[tuple[str, str, Any]] = []

    async def store_event(self, stream_id: str, message: Any) -> str:
        event_id = str(len(self._events) + 1)
        self._events.append((stream_id, event_id, message))
        return event_id

    async def replay_events_after(self, last_event_id: str, send_callback: EventCallback) -> str | None:
        stream = next((s for s, e, _ in self._events if e == last_event_id), None)
        if stream is None:
            return None
        after = int(last_event_id)
        for s, e, message in self._events:
            if s == stream and int(e) > after and message is not None:
                await send_callback(EventMessage(message, e))
        return stream


subscriptions: set[str] = set()
app = MCPServer(name="mcpsqueeze-conformance-backend")


# ---- tools -----------------------------------------------------------------------------------------
@app.tool()
def test_simple_text() -> str:
    """Returns a fixed text."""
    return "This is a simple text response for testing."


@app.tool()
def test_image_content() -> list[ImageContent]:
    """Returns one PNG image."""
    return [ImageContent(type="image", data=PNG_1X1, mime_type="image/png")]


@app.tool()
def test_audio_content() -> list[AudioContent]:
    """Returns one WAV clip."""
    return [AudioContent(type="audio", data=WAV_TINY, mime_type="audio/wav")]


@app.tool()
def test_embedded_resource() -> list[EmbeddedResource]:
    """Returns an embedded text resource."""
    res = TextResourceContents(
        uri="test://embedded-resource", mime_type="text/plain", text="This is an embedded resource content."
    )
    return [EmbeddedResource(type="resource", resource=res)]


@app.tool()
def test_multiple_content_types() -> list[TextContent | ImageContent | EmbeddedResource]:
    """Returns text, image and resource content together."""
    res = TextResourceContents(
        uri="test://mixed-content-resource",
        mime_type="application/json",
        text='{"test": "data", "value": 123}',
    )
    return [
        TextContent(type="text", text="Multiple content types test:"),
        ImageContent(type="image", data=PNG_1X1, mime_type="image/png"),
        EmbeddedResource(type="resource", resource=res),
    ]


@app.tool()
async def test_tool_with_logging(ctx: Context) -> str:
    """Sends three log notifications while running."""
    for msg in ("Tool execution started", "Tool processing data", "Tool execution completed"):
        await ctx.info(msg)
        await asyncio.sleep(0.05)
    return "Tool with logging executed successfully"


@app.tool()
async def test_tool_with_progress(ctx: Context) -> str:
    """Sends progress 0, 50, 100 of 100."""
    for step in (0, 50, 100):
        await ctx.report_progress(progress=step, total=100, message=f"Completed step {step} of 100")
        await asyncio.sleep(0.05)
    meta = ctx.request_context.meta or {}
    return str(meta.get("progress_token", 0))


@app.tool()
async def test_sampling(prompt: str, ctx: Context) -> str:
    """Asks the client for an LLM completion (sampling/createMessage)."""
    try:
        # related_request_id puts the request on this call's own POST stream. Without it the SDK sends
        # it on the standalone GET stream, which the client may not have opened yet: the request is then
        # stored silently and the call hangs until the client's 60 s timeout (1 run in ~8 here).
        result = await ctx.session.create_message(
            messages=[SamplingMessage(role="user", content=TextContent(type="text", text=prompt))],
            max_tokens=100,
            related_request_id=ctx.request_id,
        )
        text = result.content.text if result.content.type == "text" else "No response"
        return f"LLM response: {text}"
    except Exception as exc:
        return f"Sampling not supported or error: {exc}"


class _UserResponse(BaseModel):
    response: str = Field(description="User's response")


class _Defaults(BaseModel):
    name: str = Field(default="John Doe", description="User name")
    age: int = Field(default=30, description="User age")
    score: float = Field(default=95.5, description="User score")
    status: str = Field(
        default="active",
        description="User status",
        json_schema_extra={"enum": ["active", "inactive", "pending"]},
    )
    verified: bool = Field(default=True, description="Verification status")


class _Enums(BaseModel):
    untitledSingle: str = Field(
        description="Simple enum without titles",
        json_schema_extra={"enum": ["active", "inactive", "pending"]},
    )
    titledSingle: str = Field(
        description="Enum with titled options (oneOf)",
        json_schema_extra={
            "oneOf": [
                {"const": "low", "title": "Low Priority"},
                {"const": "medium", "title": "Medium Priority"},
                {"const": "high", "title": "High Priority"},
            ]
        },
    )
    untitledMulti: list[str] = Field(
        description="Multi-select without titles",
        json_schema_extra={"items": {"type": "string", "enum": ["read", "write", "execute"]}},
    )
    titledMulti: list[str] = Field(
        description="Multi-select with titled options",
        json_schema_extra={
            "items": {
                "anyOf": [
                    {"const": "feature", "title": "New Feature"},
                    {"const": "bug", "title": "Bug Fix"},
                    {"const": "docs", "title": "Documentation"},
                ]
            }
        },
    )
    legacyEnum: str = Field(
        description="Legacy enum with enumNames",
        json_schema_extra={
            "enum": ["small", "medium", "large"],
            "enumNames": ["Small Size", "Medium Size", "Large Size"],
        },
    )


async def _elicit(ctx: Context, message: str, schema: type[BaseModel], prefix: str) -> str:
    try:
        result = await ctx.elicit(message=message, schema=schema)
        content = result.data.model_dump_json() if result.action == "accept" else "{}"
        return f"{prefix}: action={result.action}, content={content}"
    except Exception as exc:
        return f"Elicitation not supported or error: {exc}"


@app.tool()
async def test_elicitation(message: str, ctx: Context) -> str:
    """Asks the client for user input (elicitation/create)."""
    return await _elicit(ctx, message, _UserResponse, "User response")


@app.tool()
async def test_elicitation_sep1034_defaults(ctx: Context) -> str:
    """Elicitation whose schema has defaults for every primitive type (SEP-1034)."""
    return await _elicit(ctx, "Please provide user information", _Defaults, "Elicitation result")


@app.tool()
async def test_elicitation_sep1330_enums(ctx: Context) -> str:
    """Elicitation with the enum schema variants of SEP-1330."""
    return await _elicit(
        ctx, "Please select values using different enum schema types", _Enums, "Elicitation completed"
    )


@app.tool()
def test_error_handling() -> str:
    """Always fails (isError result)."""
    raise RuntimeError("This tool intentionally returns an error for testing")


@app.tool()
async def test_reconnection(ctx: Context) -> str:
    """Closes the SSE stream mid-call so the client must resume (SEP-1699)."""
    await ctx.info("Before disconnect")
    await ctx.close_sse_stream()
    await asyncio.sleep(0.2)
    await ctx.info("After reconnect")
    return "Reconnection test completed"


# ---- 2026-07-28 multi-round tool requests (SEP-2322): InputRequiredResult, then the retry ----------
def _input_required(key: str, request: dict[str, Any]) -> InputRequiredResult:
    return InputRequiredResult.model_validate(
        {"resultType": "input_required", "inputRequests": {key: request}}
    )


def _answer(ctx: Context, key: str) -> Any:
    responses = ctx.input_responses or {}
    answer = responses.get(key)
    return answer.model_dump(by_alias=True, mode="json", exclude_none=True) if answer is not None else None


@app.tool()
def test_input_required_result_elicitation(ctx: Context) -> str | InputRequiredResult:
    """Asks for the user's name through an InputRequiredResult (no server-to-client request)."""
    answer = _answer(ctx, "user_name")
    if answer is None:
        schema = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
        params = {"message": "What is your name?", "requestedSchema": schema}
        return _input_required("user_name", {"method": "elicitation/create", "params": params})
    return f"Hello, {(answer.get('content') or {}).get('name', 'stranger')}!"


@app.tool()
def test_input_required_result_sampling(ctx: Context) -> str | InputRequiredResult:
    """Asks for an LLM completion through an InputRequiredResult."""
    answer = _answer(ctx, "capital_question")
    if answer is None:
        message = {"role": "user", "content": {"type": "text", "text": "What is the capital of France?"}}
        params = {"messages": [message], "maxTokens": 100}
        return _input_required("capital_question", {"method": "sampling/createMessage", "params": params})
    return f"LLM said: {(answer.get('content') or {}).get('text', '')}"


@app.tool()
def test_input_required_result_list_roots(ctx: Context) -> str | InputRequiredResult:
    """Asks for the client's roots through an InputRequiredResult."""
    answer = _answer(ctx, "client_roots")
    if answer is None:
        return _input_required("client_roots", {"method": "roots/list", "params": {}})
    return "Roots: " + ", ".join(str(r.get("uri")) for r in answer.get("roots") or [])


# SEP-1613: the listing must keep $schema, $defs and additionalProperties as written.
JSON_SCHEMA_2020_12 = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "$defs": {
        "address": {
            "type": "object",
            "properties": {"street": {"type": "string"}, "city": {"type": "string"}},
        }
    },
    "properties": {"name": {"type": "string"}, "address": {"$ref": "#/$defs/address"}},
    "additionalProperties": False,
}


@app.tool(description="Tool with JSON Schema 2020-12 features")
def json_schema_2020_12_tool(name: str | None = None, address: dict[str, Any] | None = None) -> str:
    return json.dumps({"name": name, "address": address})


app._tool_manager.get_tool("json_schema_2020_12_tool").parameters = JSON_SCHEMA_2020_12


# ---- resources -------------------------------------------------------------------------------------
@app.resource("test://static-text")
def static_text() -> str:
    """A static text resource."""
    return "This is the content of the static text resource."


@app.resource("test://static-binary")
def static_binary() -> bytes:
    """A static binary resource (PNG)."""
    return base64.b64decode(PNG_1X1)


@app.resource("test://template/{id}/data")
def template_data(id: str) -> str:
    """A templated resource."""
    return json.dumps({"id": id, "templateTest": True, "data": f"Data for ID: {id}"})


@app.resource("test://watched-resource")
def watched() -> str:
    """A resource that can be subscribed to."""
    return "Watched resource content"


# ---- prompts ---------------------------------------------------------------------------------------
@app.prompt()
def test_simple_prompt() -> list[UserMessage]:
    """A prompt without arguments."""
    return [
        UserMessage(
            role="user", content=TextContent(type="text", text="This is a simple prompt for testing.")
        )
    ]


@app.prompt()
def test_prompt_with_arguments(arg1: str, arg2: str) -> list[UserMessage]:
    """A prompt with two required arguments."""
    text = f"Prompt with arguments: arg1='{arg1}', arg2='{arg2}'"
    return [UserMessage(role="user", content=TextContent(type="text", text=text))]


@app.prompt()
def test_prompt_with_embedded_resource(resourceUri: str) -> list[UserMessage]:
    """A prompt embedding a resource."""
    res = TextResourceContents(
        uri=resourceUri, mime_type="text/plain", text="Embedded resource content for testing."
    )
    return [
        UserMessage(role="user", content=EmbeddedResource(type="resource", resource=res)),
        UserMessage(
            role="user", content=TextContent(type="text", text="Please process the embedded resource above.")
        ),
    ]


@app.prompt()
def test_prompt_with_image() -> list[UserMessage]:
    """A prompt containing an image."""
    return [
        UserMessage(role="user", content=ImageContent(type="image", data=PNG_1X1, mime_type="image/png")),
        UserMessage(role="user", content=TextContent(type="text", text="Please analyze the image above.")),
    ]


# ---- logging level, subscriptions, completion ------------------------------------------------------
async def _set_level(ctx: ServerRequestContext, params: SetLevelRequestParams) -> EmptyResult:
    return EmptyResult()


async def _subscribe(ctx: ServerRequestContext, params: SubscribeRequestParams) -> EmptyResult:
    subscriptions.add(str(params.uri))
    return EmptyResult()


async def _unsubscribe(ctx: ServerRequestContext, params: UnsubscribeRequestParams) -> EmptyResult:
    subscriptions.discard(str(params.uri))
    return EmptyResult()


_low = app._lowlevel_server  # no public API for these three in MCPServer 2.3
_low.add_request_handler("logging/setLevel", SetLevelRequestParams, _set_level)
_low.add_request_handler("resources/subscribe", SubscribeRequestParams, _subscribe)
_low.add_request_handler("resources/unsubscribe", UnsubscribeRequestParams, _unsubscribe)


@app.completion()
async def _complete(
    ref: PromptReference | ResourceTemplateReference,
    argument: CompletionArgument,
    context: CompletionContext | None,
) -> Completion:
    return Completion(values=[], total=0, has_more=False)


# ---- entry point -----------------------------------------------------------------------------------
def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=0, help="0 picks a free port")
    ap.add_argument("--log-level", default="warning")
    args = ap.parse_args(argv)

    import uvicorn

    port = args.port or _free_port()
    starlette_app = app.streamable_http_app(
        event_store=MemoryEventStore(), retry_interval=100, host=args.host
    )
    config = uvicorn.Config(starlette_app, host=args.host, port=port, log_level=args.log_level)
    server = uvicorn.Server(config)

    async def serve() -> None:
        task = asyncio.create_task(server.serve())
        while not server.started:
            if task.done():
                await task
                return
            await asyncio.sleep(0.02)
        print(f"LISTENING http://{args.host}:{port}/mcp", flush=True)
        await task

    asyncio.run(serve())
    return 0


if __name__ == "__main__":
    sys.exit(main())
