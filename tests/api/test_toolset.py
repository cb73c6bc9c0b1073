"""shrink_tools: host-owned tools wrapped by the proxy's pipeline, recovered through the recover tool."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any, Literal

import anyio
import pytest
from pydantic import BaseModel

from mcpsqueeze import UsageError, shrink_tools
from rawclient import assert_golden

GOLDEN = Path(__file__).with_name("golden")
ROWS = [{"id": i, "name": f"row {i}", "tags": ["a", "b"], "body": "payload " * 10} for i in range(2300)]


def big_json(limit: int = 2300) -> dict[str, Any]:
    """Return over 200 KB (about 330 KB) of rows as JSON."""
    return {"total": limit, "rows": ROWS[:limit]}


async def big_json_async(limit: int = 2300) -> dict[str, Any]:
    """The same rows, from a coroutine."""
    await anyio.sleep(0)
    return big_json(limit)


def shown(result: dict[str, Any]) -> int:
    return sum(len(b["text"]) for b in result["content"] if b.get("type") == "text")


def expected_text() -> str:
    return json.dumps(big_json(), ensure_ascii=False)


def test_a_200_kb_json_function_gives_a_preview_within_budget_and_recovers_byte_for_byte() -> None:
    assert len(expected_text()) > 200_000
    with shrink_tools([big_json], budget=20000) as toolset:
        presented = toolset.call_sync("big_json", {})
        assert presented["isError"] is False
        assert shown(presented) <= 20000
        record = presented["_meta"]["truncation"]
        assert "original_response_file" not in record  # memory only by default
        assert 'squeeze_recover {"response_id"' in record["message"]
        recovered = toolset.call_sync("squeeze_recover", {"response_id": record["response_id"]})
        assert recovered["isError"] is False
        assert recovered["content"] == [{"type": "text", "text": expected_text()}]


@pytest.mark.anyio
async def test_an_async_function_is_wrapped_the_same_way() -> None:
    toolset = shrink_tools([big_json_async], budget=20000)
    try:
        presented = await toolset.call("big_json_async", {"limit": 2300})
        assert shown(presented) <= 20000
        rid = presented["_meta"]["truncation"]["response_id"]
        recovered = await toolset.call("squeeze_recover", {"response_id": rid})
        assert recovered["content"][0]["text"] == expected_text()
        part = await toolset.call("squeeze_recover", {"response_id": rid, "pointer": "/rows/7/name"})
        assert part["content"][0]["text"] == "row 7"
        window = await toolset.call("squeeze_recover", {"response_id": rid, "offset": 10, "length": 20})
        assert window["content"][0]["text"] == expected_text()[10:30]
    finally:
        toolset.close()


def test_the_schema_comes_from_type_hints_and_the_description_from_the_docstring() -> None:
    def search(query: str, limit: int = 10, exact: bool | None = None) -> str:
        """Search the things."""
        return query * limit

    with shrink_tools([search]) as toolset:
        tool = toolset.tools[0]
        assert tool["name"] == "search" and tool["description"] == "Search the things."
        assert tool["input_schema"]["required"] == ["query"]
        assert tool["input_schema"]["properties"]["limit"] == {"default": 10, "type": "integer"}
        assert toolset.call_sync("search", {"query": "ab", "limit": 2})["content"][0]["text"] == "abab"
        bad = toolset.call_sync("search", {"limit": "many"})
        assert bad["isError"] is True and "query" in bad["content"][0]["text"]


def test_a_tool_named_squeeze_recover_keeps_its_name_and_the_recover_tool_is_suffixed() -> None:
    mine = {
        "name": "squeeze_recover",
        "description": "the host's own",
        "input_schema": {"type": "object", "properties": {}},
        "handler": lambda: "host tool ran",
    }
    taken = {**mine, "name": "squeeze_recover_2"}
    with shrink_tools([mine, taken, big_json]) as toolset:
        names = [t["name"] for t in toolset.tools]
        assert names == ["squeeze_recover", "squeeze_recover_2", "big_json", "squeeze_recover_3"]
        assert toolset.call_sync("squeeze_recover", {})["content"][0]["text"] == "host tool ran"
        presented = toolset.call_sync("big_json", {})
        record = presented["_meta"]["truncation"]
        assert 'squeeze_recover_3 {"response_id"' in record["message"]
        recovered = toolset.call_sync("squeeze_recover_3", {"response_id": record["response_id"]})
        assert recovered["content"][0]["text"] == expected_text()


def test_handlers_may_return_text_json_or_a_call_tool_result() -> None:
    from mcp_types import CallToolResult, TextContent

    tools = [
        {"name": "text", "description": "", "input_schema": {}, "handler": lambda: "plain"},
        {"name": "json", "description": "", "input_schema": {}, "handler": lambda: [1, "two"]},
        {
            "name": "mcp",
            "description": "",
            "input_schema": {},
            "handler": lambda: CallToolResult(content=[TextContent(type="text", text="hi")], is_error=True),
        },
    ]
    with shrink_tools(tools) as toolset:
        assert toolset.call_sync("text")["content"] == [{"type": "text", "text": "plain"}]
        assert toolset.call_sync("json")["content"] == [{"type": "text", "text": '[1, "two"]'}]
        result = toolset.call_sync("mcp")
        assert result["isError"] is True and result["content"] == [{"type": "text", "text": "hi"}]


def test_a_repeated_result_becomes_a_pointer_that_recovers() -> None:
    with shrink_tools([big_json]) as toolset:
        toolset.call_sync("big_json", {})
        again = toolset.call_sync("big_json", {})
        record = again["_meta"]["truncation"]
        assert "identical to the result of call #1 (big_json)" in record["message"]
        recovered = toolset.call_sync("squeeze_recover", {"response_id": record["response_id"]})
        assert recovered["content"][0]["text"] == expected_text()


def test_a_failing_tool_is_an_error_result_not_a_crash() -> None:
    def explode() -> str:
        raise ValueError("no such row")

    with shrink_tools([explode]) as toolset:
        result = toolset.call_sync("explode", {})
        assert result == {"content": [{"type": "text", "text": "ValueError: no such row"}], "isError": True}
        unknown = toolset.call_sync("nope", {})
        assert unknown["isError"] is True and "no tool named 'nope'" in unknown["content"][0]["text"]


def test_an_unknown_id_fails_explicitly() -> None:
    with shrink_tools([big_json]) as toolset:
        result = toolset.call_sync("squeeze_recover", {"response_id": "0" * 32})
        assert result["isError"] is True
        assert "Unknown response id" in result["content"][0]["text"]
        malformed = toolset.call_sync("squeeze_recover", {"response_id": "nope"})
        assert malformed["isError"] is True and "32 hex characters" in malformed["content"][0]["text"]


def test_an_evicted_id_fails_explicitly_and_the_tool_is_not_run_again() -> None:
    runs = []

    def counted(n: int) -> dict[str, Any]:
        runs.append(n)
        return big_json(1000 + n)

    with shrink_tools([counted], cache_entries=1) as toolset:
        first = toolset.call_sync("counted", {"n": 1})["_meta"]["truncation"]["response_id"]
        toolset.call_sync("counted", {"n": 2})
        result = toolset.call_sync("squeeze_recover", {"response_id": first})
        assert result["isError"] is True and "evicted" in result["content"][0]["text"]
        assert runs == [1, 2]


def test_an_expired_id_fails_explicitly() -> None:
    with shrink_tools([big_json], cache_ttl=0.05) as toolset:
        rid = toolset.call_sync("big_json", {})["_meta"]["truncation"]["response_id"]
        end = time.monotonic() + 10  # poll with a deadline: the entry expires 50 ms after it was stored
        while True:
            result = toolset.call_sync("squeeze_recover", {"response_id": rid})
            if result["isError"] or time.monotonic() > end:
                break
        assert result["isError"] is True and "expired after 0.05 s" in result["content"][0]["text"]


def test_bad_tool_lists_are_refused_clearly() -> None:
    with pytest.raises(UsageError, match="share the name"):
        shrink_tools([big_json, big_json])
    with pytest.raises(UsageError, match="function or a dict"):
        shrink_tools([42])  # type: ignore[list-item]
    with pytest.raises(UsageError, match="budget must be at least"):
        shrink_tools([big_json], budget=10)


def test_the_recover_tool_as_the_host_api_shows_it_is_pinned() -> None:
    with shrink_tools([big_json]) as toolset:
        spec = toolset.tools[-1]
    assert_golden(GOLDEN / "recover_tool.json", json.dumps(spec, indent=2) + "\n")


class Filter(BaseModel):
    state: str


def test_a_schema_keeps_a_property_called_title_and_nested_models() -> None:
    def find(title: str, mode: Literal["a", "b"] = "a", where: Filter | None = None) -> str:
        """Find things."""
        return f"{title}:{mode}:{where.state if where else '-'}"

    with shrink_tools([find]) as toolset:
        schema = toolset.tools[0]["input_schema"]
        assert schema["properties"]["title"] == {"type": "string"}
        assert schema["properties"]["mode"] == {"default": "a", "enum": ["a", "b"], "type": "string"}
        result = toolset.call_sync("find", {"title": "t", "where": {"state": "open"}})
        assert result["content"][0]["text"] == "t:a:open"
