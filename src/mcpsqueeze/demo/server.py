"""The bundled demo MCP server: deterministic tools, prompts and resources that exercise a proxy.

Run it with ``python -m mcpsqueeze.demo.server [--transport stdio|streamable-http] [--host H] [--port N]``.
Nothing touches the network (except the HTTP listener) and every generated payload is a pure function of
the tool's arguments, so the same call always yields byte-identical results.

Server-to-client requests (sampling, elicitation, roots) go through the SDK's ``Resolve`` markers, which
pick the wire form the negotiated protocol needs: a mid-call request on handshake-era protocols
(<= 2025-11-25), an ``InputRequiredResult`` round trip on 2026-07-28.
"""

from __future__ import annotations

import argparse
import json
import os
import warnings
from typing import Annotated, Any, Literal, get_args

import anyio
from mcp.server import ServerRequestContext
from mcp.server.mcpserver import Context, Elicit, ListRoots, MCPServer, Resolve, Sample
from mcp.shared.exceptions import MCPDeprecationWarning
from mcp_types import (
    CallToolResult,
    CompleteRequestParams,
    CompleteResult,
    Completion,
    CreateMessageResult,
    EmptyResult,
    ImageContent,
    ListRootsResult,
    LoggingLevel,
    PromptReference,
    SamplingMessage,
    SetLevelRequestParams,
    SubscribeRequestParams,
    TextContent,
    ToolAnnotations,
    UnsubscribeRequestParams,
)
from pydantic import BaseModel

from . import _data

_LEVELS: tuple[LoggingLevel, ...] = get_args(LoggingLevel)  # from the least severe

# Logging, sampling and roots are deprecated in 2026-07-28 but still what a proxy must carry: keep quiet.
warnings.filterwarnings("ignore", category=MCPDeprecationWarning)

mcp: MCPServer[Any] = MCPServer(
    "mcpsqueeze-demo",
    version="0.1.0",
    instructions="Deterministic demo backend for mcpsqueeze: large, repetitive and tricky tool results.",
)

# Per-process protocol state kept by the handshake-era handlers registered at the bottom of this file.
_state: dict[str, Any] = {"min_level": "debug"}


# The tools that only read: running one again is harmless, so `full` may run it when no original is held.
READ_ONLY = ToolAnnotations(read_only_hint=True)


def _json_text(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


# ----------------------------------------------------------------------------------------- large results
@mcp.tool(structured_output=False, annotations=READ_ONLY)
def search_issues(query: str, limit: int = 300) -> str:
    """Search the issue tracker. Returns a JSON object with `total_count`, `issues` and `next_page_token`."""
    return _json_text(_data.search_issues(query, limit))


@mcp.tool(structured_output=False, annotations=READ_ONLY)
def list_rows(table: str, n: int = 500) -> str:
    """Dump `n` rows of a table as a JSON array (the rows are nearly identical)."""
    return _json_text(_data.list_rows(table, n))


@mcp.tool(structured_output=False, annotations=READ_ONLY)
def read_file(path: str) -> str:
    """Read a text file (about 60 KB of prose for any path; the same path always gives the same text)."""
    return _data.prose(path)


@mcp.tool(annotations=READ_ONLY)
def big_structured(n: int = 300) -> dict[str, Any]:
    """A large JSON object returned both as text and as structuredContent (with an outputSchema)."""
    return _data.big_structured(n)


# ----------------------------------------------------------------------------------------- small results
@mcp.tool(structured_output=False, annotations=READ_ONLY)
def echo(text: str) -> str:
    """Return `text` unchanged."""
    return text


class Sum(BaseModel):
    a: int
    b: int
    sum: int


@mcp.tool(annotations=READ_ONLY)
def add(a: int, b: int) -> Sum:
    """Add two integers; the result is text plus structuredContent matching the tool's outputSchema."""
    return Sum(a=a, b=b, sum=a + b)


@mcp.tool(annotations=READ_ONLY)
def fail(message: str) -> CallToolResult:
    """Return an error result (isError: true) whose only text is `message`."""
    return CallToolResult(content=[TextContent(type="text", text=message)], is_error=True)


# An 8x8 RGB PNG (a diagonal gradient), base64.
_PNG = (
    "iVBORw0KGgoAAAANSUhEUgAAAAgAAAAICAIAAABLbSncAAAAbElEQVR4nBXNQRUAUQhCUaMYhShGeVGIQhSizB+XXA7ODDtouIHBQ4YOM8su"
    "Wm5h8ZKl+0CskDiBsIioHhx76LiDw0eO3oN/4FVf+J8h0PduzBqZ8x/bxNQPwgaFy192SGgelC0q13/CJaXlA8Z7WAGfV950AAAAAElFTkSuQmCC"
)


@mcp.tool(annotations=READ_ONLY)
def image() -> CallToolResult:
    """A small PNG image block followed by a text block."""
    png = ImageContent(type="image", data=_PNG, mime_type="image/png")
    return CallToolResult(content=[png, TextContent(type="text", text="An 8x8 gradient PNG.")])


@mcp.tool(structured_output=False)
def kitchen_sink(
    page_id: str,
    pageSize: int = 10,
    ratio: float = 0.5,
    verbose: bool = False,
    tags: list[str] = [],  # noqa: B006 - never mutated; the default shows up in the input schema
    filter: dict[str, Any] | None = None,
    mode: Literal["fast", "slow"] = "fast",
) -> str:
    """Echo every argument as JSON; its parameters cover each JSON-schema kind (for CLI flag mapping)."""
    return _json_text(
        {
            "page_id": page_id,
            "pageSize": pageSize,
            "ratio": ratio,
            "verbose": verbose,
            "tags": tags,
            "filter": filter,
            "mode": mode,
        }
    )


# ------------------------------------------------------------------------------- timing, death, logging
@mcp.tool(structured_output=False)
async def sleep(seconds: float, ctx: Context) -> str:
    """Sleep, reporting progress four times when the request carries a progressToken."""
    steps = 4
    for step in range(1, steps + 1):
        await anyio.sleep(max(0.0, seconds) / steps)
        await ctx.report_progress(step, steps, f"step {step}/{steps}")
    return "slept"


@mcp.tool(structured_output=False)
def crash() -> str:
    """Kill the server process at once (exit status 3), to test how a proxy handles a dead backend."""
    os._exit(3)


@mcp.tool(structured_output=False)
async def log(message: str, ctx: Context, level: LoggingLevel = "info") -> str:
    """Send `message` to the client as a logging notification, then return "logged"."""
    if _LEVELS.index(level) >= _LEVELS.index(_state["min_level"]):
        await ctx.log(level, message, logger_name="demo")
    return "logged"


# ------------------------------------------------------------------------ server-to-client requests
def _sample_request(prompt: str) -> Sample:
    message = SamplingMessage(role="user", content=TextContent(type="text", text=prompt))
    return Sample([message], max_tokens=256)


@mcp.tool(structured_output=False)
def ask_llm(prompt: str, reply: Annotated[CreateMessageResult, Resolve(_sample_request)]) -> str:
    """Ask the client's LLM (sampling/createMessage) and return its answer text."""
    content = reply.content
    return content.text if isinstance(content, TextContent) else content.model_dump_json(by_alias=True)


class Answer(BaseModel):
    answer: str


def _elicit_request(question: str) -> Elicit[Answer]:
    return Elicit(question, Answer)


@mcp.tool(structured_output=False)
def ask_user(question: str, answer: Annotated[Answer, Resolve(_elicit_request)]) -> str:
    """Ask the user (elicitation/create) and return what they answered."""
    return answer.answer


@mcp.tool(structured_output=False)
def list_roots(roots: Annotated[ListRootsResult, Resolve(ListRoots)]) -> str:
    """Ask the client for its roots (roots/list) and return them as JSON."""
    return _json_text([{"uri": str(r.uri), "name": r.name} for r in roots.roots])


# ----------------------------------------------------------------------------------- prompts, resources
@mcp.prompt()
def triage_guide() -> str:
    """How to triage an incoming issue."""
    return "Read the issue, label it (bug, enhancement, docs), assign an owner and set a milestone."


@mcp.prompt()
def summarize_issue(issue_key: str, style: str = "short") -> str:
    """Summarize one issue from the tracker in the given style (short, detailed or bullet)."""
    return f"Summarize issue {issue_key} in a {style} style. Fetch it from demo://issues/{issue_key}."


_STYLES = ("short", "detailed", "bullet")


async def _complete(ctx: ServerRequestContext[Any], params: CompleteRequestParams) -> CompleteResult:
    """Completion for the `summarize_issue` prompt's arguments."""
    ref, argument = params.ref, params.argument
    values: list[str] = []
    if isinstance(ref, PromptReference) and ref.name == "summarize_issue":
        if argument.name == "style":
            values = [s for s in _STYLES if s.startswith(argument.value)]
        elif argument.name == "issue_key":
            keys = [f"DEMO-{n}" for n in range(1000, 1010)]
            values = [k for k in keys if k.startswith(argument.value.upper())]
    return CompleteResult(completion=Completion(values=values))


@mcp.resource("demo://readme", name="readme", mime_type="text/plain")
def readme() -> str:
    """A short text resource."""
    return "mcpsqueeze demo server.\nTools return large, deterministic results for proxy tests.\n"


@mcp.resource("demo://dataset.json", name="dataset", mime_type="application/json")
def dataset() -> str:
    """A larger (~140 KB) JSON resource."""
    return json.dumps(_data.list_rows("dataset", 600), indent=1)


@mcp.resource("demo://issues/{key}", name="issue", mime_type="application/json")
def issue(key: str) -> str:
    """One issue (a template resource)."""
    body = _data.search_issues(key, 1)["issues"][0]
    return _json_text({**body, "key": key})


# ------------------------------------------------------ low-level handlers MCPServer does not provide
async def _set_level(ctx: ServerRequestContext[Any], params: SetLevelRequestParams) -> EmptyResult:
    _state["min_level"] = params.level
    return EmptyResult()


async def _accept(ctx: ServerRequestContext[Any], params: Any) -> EmptyResult:
    """(Un)subscribing is accepted; the resources never change, so no update is ever sent."""
    return EmptyResult()


_lowlevel = mcp._lowlevel_server  # MCPServer has no public hook for these methods (completion's is untyped).
_lowlevel.add_request_handler("completion/complete", CompleteRequestParams, _complete)
_lowlevel.add_request_handler("logging/setLevel", SetLevelRequestParams, _set_level)
_lowlevel.add_request_handler("resources/subscribe", SubscribeRequestParams, _accept)
_lowlevel.add_request_handler("resources/unsubscribe", UnsubscribeRequestParams, _accept)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m mcpsqueeze.demo.server", description="Demo MCP server")
    parser.add_argument("--transport", choices=("stdio", "streamable-http"), default="stdio")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8765)
    args = parser.parse_args(argv)
    if args.transport == "stdio":
        mcp.run("stdio")
    else:
        mcp.run("streamable-http", host=args.host, port=args.port)


if __name__ == "__main__":
    main()
