"""Recovery as every door offers it: the recover tool's definition, and its answer from a stored original.

A door only translates: the MCP relay, the stateless HTTP frontend, serve's API, the shell shim and the
Python API each build a `RecoverRequest` (core/_request.py) from their protocol, hand it to `recover`
and show what it returns. It never re-runs a tool: the original comes from the store. Light to import
(no orjson, no pipeline): the shell shim renders recovery files with `answer`.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, Protocol

from .._errors import RecoveryError, UsageError
from .._lines import read_lines
from .._results import text_of
from ..recovery import read_window, resolve_pointer
from ._request import RecoverRequest

if TYPE_CHECKING:
    from ._pipeline import Pipeline

__all__ = ["Originals", "answer", "list_recover_tool", "recover", "recover_tool_definition", "tool_answer"]


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
    result: dict[str, Any],
    current: str | None,
    pipelines: Iterable[Pipeline],
    definition: Callable[[str], dict[str, Any]] = recover_tool_definition,
) -> tuple[str | None, dict[str, Any]]:
    """A tools/list result with our recover tool appended under the first free name (squeeze_recover,
    squeeze_recover_2, ...: the backend may own the name), and that name, which the pipelines' MCP-mode
    stages now use in their records. Unchanged when there is no recover tool (`current` None) or the
    page is not the last one. `definition`: the tool as listed (the compressed listing's is shorter)."""
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
    return name, {**result, "tools": [*tools, definition(name)]}


class Originals(Protocol):
    """What answering needs of a store: the stored bytes of one original (RecoveryError if none)."""

    def load(self, response_id: str) -> bytes: ...


def recover(store: Originals | None, request: RecoverRequest) -> dict[str, Any]:
    """The recover tool's answer to ``request``, for every door: load the original (never re-running a
    tool) and render the part asked for. RecoveryError when the original is not available, UsageError
    when the part asked for does not exist in it."""
    from .._jsonbytes import loads  # orjson: not on the shell shim's path, which reads files itself

    if store is None:
        raise RecoveryError("this proxy keeps no originals (--no-shrink and --no-dedup)")
    data = store.load(request.response_id)
    try:
        original = loads(data) if data else {}
    except (ValueError, RecursionError) as exc:
        raise RecoveryError(
            f"the stored original is not valid JSON ({exc}); it may have been altered"
        ) from exc
    return answer(original, request)


def tool_answer(store: Originals | None, arguments: object) -> dict[str, Any]:
    """The recover tool's CallToolResult for a call with ``arguments``, as every MCP-speaking door gives
    it (wrap's relay, the stateless frontend, Toolset): a refused request or a missing original is an
    ``isError`` result whose text says why, never an exception that could end the session."""
    try:
        return recover(store, RecoverRequest.parse(arguments))
    except (RecoveryError, UsageError) as exc:
        return {"content": [{"type": "text", "text": f"mcpsqueeze: {exc}"}], "isError": True}


def answer(original: dict[str, Any], request: RecoverRequest) -> dict[str, Any]:
    """The CallToolResult for ``request`` from the ``original`` CallToolResult: the original, one JSON
    node, a JMESPath projection (of the node, when both are given), a text window of any of these, or a
    range of its lines (numbered as the preview's fold markers number them). Pure."""
    if not request.selects:
        return {"content": original.get("content", []), "isError": False}
    text = text_of(original)
    if request.pointer is not None or request.query is not None:
        text = _selected(original, text, request)
    if request.lines is not None:
        chosen, first, last, total_lines = read_lines(text, str(request.lines))
        return {
            "content": [{"type": "text", "text": chosen}],
            "isError": False,
            "_meta": {"mcpsqueeze/lines": {"first": first, "last": last, "total_lines": total_lines}},
        }
    window, total = read_window(text, request.offset or 0, request.length)
    start = request.offset or 0
    # The window is the exact text (so windows concatenate back to the original); its place is in _meta.
    return {
        "content": [{"type": "text", "text": window}],
        "isError": False,
        "_meta": {"mcpsqueeze/window": {"offset": start, "length": len(window), "total_chars": total}},
    }


def _selected(original: dict[str, Any], text: str, request: RecoverRequest) -> str:
    """The text of the node ``pointer`` names and ``query`` projects (a string as is, else indented JSON)."""
    try:
        document = json.loads(text)
    except (ValueError, RecursionError):
        if "structuredContent" not in original:
            raise RecoveryError(
                f"the original is not JSON, so a {'pointer' if request.pointer is not None else 'query'} "
                "cannot select a part of it; use offset/length or lines to read its text instead"
            ) from None
        document = original["structuredContent"]
    node = resolve_pointer(document, request.pointer) if request.pointer is not None else document
    if request.query is not None:
        from .._projection import project  # jmespath: loaded only for a query

        node = project(node, request.query, size=len(text))
    if isinstance(node, str):
        return node
    try:
        return json.dumps(node, ensure_ascii=False, indent=1)
    except RecursionError:
        raise RecoveryError(
            "the selected part nests too deeply to show as JSON; select a deeper part with pointer, "
            "or read the text with offset/length"
        ) from None
