"""Recovery as every door offers it: the recover tool's definition, and its answer from a stored original.

A door only translates: the MCP relay, the stateless HTTP frontend, serve's API, the shell shim and the
Python API all hand the recover arguments to `recover_call` and show what it returns. It never re-runs
a tool: the original comes from the store.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from .._errors import RecoveryError, UsageError
from .._jsonbytes import loads
from .._lines import read_lines
from .._results import text_of
from ..recovery import RecoveryStore, is_response_id, read_window, resolve_pointer
from ._pipeline import Pipeline

__all__ = ["list_recover_tool", "recover_call", "recover_result", "recover_tool_definition"]


def recover_tool_definition(name: str) -> dict[str, Any]:
    return {
        "name": name,
        "title": "Recover an original result",
        "description": (
            "Return the complete original of a tool result that mcpsqueeze shrank or deduplicated. "
            "Give the response_id from the truncation notice. For a large original, read one part: "
            "'pointer' is an RFC 6901 JSON pointer into the original JSON (e.g. /issues/17), and "
            "'offset'/'length' select a window of characters of the original (or of the pointed part), "
            "and 'lines' a range of its lines, e.g. \"120-180\" (as a preview's [lines A-B folded] markers "
            "name them); 'query' is a JMESPath expression that keeps only what you need of JSON (e.g. "
            "issues[].{key: key, summary: summary}). Never re-runs the tool."
        ),
        "inputSchema": {
            "type": "object",
            "properties": {
                "response_id": {"type": "string", "description": "32 hex characters from the notice"},
                "pointer": {"type": "string", "description": "RFC 6901 JSON pointer, e.g. /issues/17"},
                "query": {"type": "string", "description": "JMESPath expression, e.g. issues[].key"},
                "offset": {"type": "integer", "minimum": 0, "description": "first character of the window"},
                "length": {"type": "integer", "minimum": 1, "description": "characters in the window"},
                "lines": {"type": "string", "description": "a line range of the original, e.g. 120-180"},
            },
            "required": ["response_id"],
            "additionalProperties": False,
        },
        "annotations": {"readOnlyHint": True, "idempotentHint": True, "openWorldHint": False},
    }


def list_recover_tool(
    result: dict[str, Any], current: str | None, pipelines: Iterable[Pipeline]
) -> tuple[str | None, dict[str, Any]]:
    """A tools/list result with our recover tool appended under the first free name (squeeze_recover,
    squeeze_recover_2, ...: the backend may own the name), and that name, which the pipelines' MCP-mode
    stages now use in their records. Unchanged when there is no recover tool (`current` None) or the
    page is not the last one."""
    tools = result.get("tools")
    if not current or not isinstance(tools, list) or result.get("nextCursor"):
        return current, result
    names = {t.get("name") for t in tools if isinstance(t, dict)}
    name = "squeeze_recover"
    suffix = 1
    while name in names:
        suffix += 1
        name = f"squeeze_recover_{suffix}"
    for stage in (stage for pipeline in pipelines for stage in pipeline.stages):
        voice = getattr(stage, "voice", None)
        if voice is not None:  # stages that word recovery name the tool
            stage.voice = voice.named(name)  # type: ignore[attr-defined]
    return name, {**result, "tools": [*tools, recover_tool_definition(name)]}


def recover_result(
    original_bytes: bytes,
    pointer: str | None = None,
    offset: int | None = None,
    length: int | None = None,
    lines: str | None = None,
    *,
    query: str | None = None,
) -> dict[str, Any]:
    """The CallToolResult that `squeeze_recover` returns: the original, one JSON node, a JMESPath
    projection (of the node, when both are given), a text window of any of these, or a range of its
    lines (numbered as the preview's fold markers number them)."""
    if lines is not None and (offset is not None or length is not None):
        raise UsageError("give either lines or offset/length, not both")
    try:
        original = loads(original_bytes) if original_bytes else {}
    except (ValueError, RecursionError) as exc:
        raise RecoveryError(
            f"the stored original is not valid JSON ({exc}); it may have been altered"
        ) from exc
    if pointer is None and offset is None and length is None and lines is None and query is None:
        return {"content": original.get("content", []), "isError": False}
    text = text_of(original)
    if pointer is not None or query is not None:
        try:
            document = json.loads(text)
        except ValueError:
            if "structuredContent" not in original:
                raise RecoveryError(
                    f"the original is not JSON, so a {'pointer' if pointer is not None else 'query'} cannot "
                    "select a part of it; use offset/length to read a window of its text instead"
                ) from None
            document = original["structuredContent"]
        node = resolve_pointer(document, pointer) if pointer is not None else document
        if query is not None:
            from .._projection import project

            node = project(node, query)
        text = node if isinstance(node, str) else json.dumps(node, ensure_ascii=False, indent=1)
    if lines is not None:
        chosen, first, last, total_lines = read_lines(text, lines)
        return {
            "content": [{"type": "text", "text": chosen}],
            "isError": False,
            "_meta": {"mcpsqueeze/lines": {"first": first, "last": last, "total_lines": total_lines}},
        }
    window, total = read_window(text, offset or 0, length)
    start = offset or 0
    # The window is the exact text (so windows concatenate back to the original); its place is in _meta.
    return {
        "content": [{"type": "text", "text": window}],
        "isError": False,
        "_meta": {"mcpsqueeze/window": {"offset": start, "length": len(window), "total_chars": total}},
    }


def recover_call(store: RecoveryStore | None, arguments: object) -> dict[str, Any]:
    """The recover tool's answer to its ``arguments``, for every door that offers the tool (the MCP
    proxy and the Python API): check them, load the original (never re-running a tool), render it.

    Raises UsageError for malformed arguments and RecoveryError when the original is not available."""
    if store is None:
        raise RecoveryError("this proxy keeps no originals (--no-shrink and --no-dedup)")
    if not isinstance(arguments, dict):
        raise UsageError("arguments must be an object with response_id")
    response_id = arguments.get("response_id")
    if not is_response_id(response_id):
        raise UsageError("response_id must be the 32 hex characters shown in the truncation notice")
    pointer = arguments.get("pointer")
    offset = arguments.get("offset")
    length = arguments.get("length")
    if pointer is not None and not isinstance(pointer, str):
        raise UsageError("pointer must be a string such as /issues/17")
    query = arguments.get("query")
    if query is not None:
        from .._projection import compile_query

        compile_query(query)  # a malformed expression is a usage error before anything is loaded
    for name, value in (("offset", offset), ("length", length)):
        if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value < 0):
            raise UsageError(f"{name} must be a non-negative integer")
    lines = arguments.get("lines")
    if lines is not None and not isinstance(lines, str):
        raise UsageError("lines must be a string such as 120-180")
    return recover_result(store.load(response_id), pointer, offset, length, lines, query=query)
