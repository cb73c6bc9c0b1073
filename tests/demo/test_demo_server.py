"""The demo server, driven by the SDK's own client: over stdio (two processes agree, a crash ends the
process), over streamable HTTP, and otherwise over the SDK's in-memory transport (the same server
object a process runs, without the process)."""

from __future__ import annotations

import base64
import json
import socket
import subprocess
import sys
import time
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import Client, StdioServerParameters
from mcp.client import ClientRequestContext
from mcp.shared.exceptions import MCPError
from pydantic import FileUrl

TOOLS = {
    "search_issues", "list_rows", "read_file", "echo", "add", "big_structured", "fail", "sleep", "crash",
    "log", "ask_llm", "ask_user", "list_roots", "image", "kitchen_sink",
}  # fmt: skip


async def raw_call(client: Client, name: str, arguments: dict[str, Any]) -> types.CallToolResult:
    """tools/call without the client's outputSchema validation: what a proxy forwards."""
    request = types.CallToolRequest(params=types.CallToolRequestParams(name=name, arguments=arguments))
    return await client.session.send_request(request, types.CallToolResult)


def text_of(result: types.CallToolResult) -> str:
    block = result.content[0]
    assert isinstance(block, types.TextContent)
    return block.text


@pytest.mark.anyio
async def test_server_lists_its_tools_prompts_resources_and_template(
    demo_in_memory: Any,
) -> None:
    async with Client(demo_in_memory) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        prompts = {p.name: p for p in (await client.list_prompts()).prompts}
        resources = {str(r.uri) for r in (await client.list_resources()).resources}
        templates = [t.uri_template for t in (await client.list_resource_templates()).resource_templates]
        completion = await client.complete(
            types.PromptReference(type="ref/prompt", name="summarize_issue"), {"name": "style", "value": "de"}
        )
    assert set(tools) == TOOLS
    assert tools["add"].output_schema is not None and tools["search_issues"].output_schema is None
    sink = tools["kitchen_sink"].input_schema["properties"]
    assert {sink[k]["type"] for k in ("page_id", "pageSize", "ratio", "verbose", "tags")} == {
        "string", "integer", "number", "boolean", "array",
    }  # fmt: skip
    assert sink["mode"]["enum"] == ["fast", "slow"]
    assert tools["kitchen_sink"].input_schema["required"] == ["page_id"]
    assert set(prompts) == {"triage_guide", "summarize_issue"}
    assert [a.name for a in prompts["summarize_issue"].arguments or []] == ["issue_key", "style"]
    assert resources == {"demo://readme", "demo://dataset.json"}
    assert templates == ["demo://issues/{key}"]
    assert completion.completion.values == ["detailed"]


@pytest.mark.anyio
async def test_search_issues_returns_a_large_json_object_with_rare_keys(
    demo_in_memory: Any,
) -> None:
    async with Client(demo_in_memory) as client:
        result = await client.call_tool("search_issues", {"query": "timeout"})
        rows = json.loads(text_of(await client.call_tool("list_rows", {"table": "users"})))
        prose = text_of(await client.call_tool("read_file", {"path": "docs/guide.md"}))
    text = text_of(result)
    assert 150_000 <= len(text) <= 250_000
    page = json.loads(text)
    assert set(page) == {"total_count", "query", "issues", "next_page_token"}
    assert len(page["issues"]) == 300
    assert all(400 <= len(issue["body"]) <= 800 for issue in page["issues"])
    assert any("milestone" in i for i in page["issues"]) and any("pull_request" in i for i in page["issues"])
    assert not all("milestone" in i for i in page["issues"])
    assert isinstance(rows, list) and len(rows) == 500 and rows[0]["region"] == rows[-1]["region"]
    assert 55_000 <= len(prose) <= 70_000 and prose.count("\n") > 500


@pytest.mark.anyio
async def test_same_arguments_give_byte_identical_results(demo_stdio: StdioServerParameters) -> None:
    async with Client(demo_stdio) as client:
        first = await raw_call(client, "search_issues", {"query": "crash", "limit": 50})
        second = await raw_call(client, "search_issues", {"query": "crash", "limit": 50})
        other = await raw_call(client, "search_issues", {"query": "crash", "limit": 51})
        files = [await raw_call(client, "read_file", {"path": "a.txt"}) for _ in range(2)]
    # A second server process must agree too: no per-process randomness.
    async with Client(demo_stdio) as client:
        third = await raw_call(client, "search_issues", {"query": "crash", "limit": 50})
    assert text_of(first) == text_of(second) == text_of(third)
    assert text_of(other) != text_of(first)
    assert text_of(files[0]) == text_of(files[1])


@pytest.mark.anyio
async def test_fail_returns_an_error_result_carrying_the_message(demo_in_memory: Any) -> None:
    async with Client(demo_in_memory) as client:
        result = await client.call_tool("fail", {"message": "backend exploded"})
    assert result.is_error is True
    assert text_of(result) == "backend exploded"


@pytest.mark.anyio
async def test_add_and_big_structured_return_text_plus_structured_content(
    demo_in_memory: Any,
) -> None:
    async with Client(demo_in_memory) as client:
        added = await client.call_tool("add", {"a": 2, "b": 40})
        big = await client.call_tool("big_structured", {})
        image = await client.call_tool("image", {})
        echoed = await client.call_tool("echo", {"text": "hi"})
        sink = await client.call_tool("kitchen_sink", {"page_id": "p1", "tags": ["x"], "filter": {"k": 1}})
    assert added.structured_content == {"a": 2, "b": 40, "sum": 42}
    assert json.loads(text_of(added)) == added.structured_content
    assert big.structured_content is not None and big.structured_content["count"] == 300
    assert json.loads(text_of(big)) == big.structured_content and len(text_of(big)) > 50_000
    png, caption = image.content
    assert isinstance(png, types.ImageContent) and isinstance(caption, types.TextContent)
    assert base64.b64decode(png.data).startswith(b"\x89PNG") and png.mime_type == "image/png"
    assert text_of(echoed) == "hi" and echoed.structured_content is None
    assert json.loads(text_of(sink)) == {
        "page_id": "p1", "pageSize": 10, "ratio": 0.5, "verbose": False, "tags": ["x"], "filter": {"k": 1},
        "mode": "fast",
    }  # fmt: skip


async def _sample(
    context: ClientRequestContext, params: types.CreateMessageRequestParams
) -> types.CreateMessageResult:
    prompt = params.messages[0].content
    assert isinstance(prompt, types.TextContent)
    reply = types.TextContent(type="text", text=f"LLM says: {prompt.text}")
    return types.CreateMessageResult(role="assistant", content=reply, model="fake")


async def _elicit(context: ClientRequestContext, params: types.ElicitRequestParams) -> types.ElicitResult:
    return types.ElicitResult(action="accept", content={"answer": f"yes to {params.message}"})


async def _roots(context: ClientRequestContext) -> types.ListRootsResult:
    return types.ListRootsResult(roots=[types.Root(uri=FileUrl("file:///work"), name="work")])


@pytest.mark.anyio
@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_server_to_client_requests_reach_the_client_callbacks(demo_in_memory: Any, mode: str) -> None:
    """Legacy sessions get mid-call requests; 2026-07-28 sessions get an InputRequiredResult round trip."""
    logs: list[types.LoggingMessageNotificationParams] = []
    progress_seen: list[float] = []

    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        logs.append(params)

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        progress_seen.append(progress)

    async with Client(
        demo_in_memory,
        mode=mode,
        sampling_callback=_sample,
        elicitation_callback=_elicit,
        list_roots_callback=_roots,
        logging_callback=on_log,
        log_level="debug",
    ) as client:
        llm = await client.call_tool("ask_llm", {"prompt": "2+2?"})
        user = await client.call_tool("ask_user", {"question": "proceed?"})
        roots = await client.call_tool("list_roots", {})
        logged = await client.call_tool("log", {"message": "hello", "level": "warning"})
        slept = await client.call_tool("sleep", {"seconds": 0.05}, progress_callback=on_progress)
    assert text_of(llm) == "LLM says: 2+2?"
    assert text_of(user) == "yes to proceed?"
    assert json.loads(text_of(roots)) == [{"uri": "file:///work", "name": "work"}]
    assert text_of(logged) == "logged"
    assert [(entry.level, entry.data) for entry in logs] == [("warning", "hello")]
    assert text_of(slept) == "slept" and progress_seen == [1, 2, 3, 4]


@pytest.mark.anyio
async def test_crash_kills_the_server_process(demo_stdio: StdioServerParameters) -> None:
    async with Client(demo_stdio) as client:
        with pytest.raises(MCPError):
            await client.call_tool("crash", {})


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def _wait_for_port(port: int, process: subprocess.Popen[bytes], deadline_s: float = 20.0) -> None:
    deadline = time.monotonic() + deadline_s
    while time.monotonic() < deadline:
        assert process.poll() is None, "the server exited before it listened"
        try:
            stream = await anyio.connect_tcp("127.0.0.1", port)
        except OSError:
            await anyio.sleep(0.05)
            continue
        await stream.aclose()
        return
    raise TimeoutError(f"nothing listened on 127.0.0.1:{port} within {deadline_s} s")


@pytest.mark.anyio
async def test_streamable_http_serves_the_same_results_on_a_loopback_port(demo_env: dict[str, str]) -> None:
    port = _free_port()
    cmd = [
        sys.executable,
        "-m",
        "mcpsqueeze.demo.server",
        "--transport",
        "streamable-http",
        "--port",
        str(port),
    ]
    process = subprocess.Popen(cmd, env=demo_env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        await _wait_for_port(port, process)
        async with Client(f"http://127.0.0.1:{port}/mcp") as client:
            names = {t.name for t in (await client.list_tools()).tools}
            result = await client.call_tool("search_issues", {"query": "http", "limit": 20})
            added = await client.call_tool("add", {"a": 1, "b": 1})
    finally:
        process.terminate()
        process.wait(timeout=10)
    assert names == TOOLS
    assert len(json.loads(text_of(result))["issues"]) == 20
    assert added.structured_content == {"a": 1, "b": 1, "sum": 2}
