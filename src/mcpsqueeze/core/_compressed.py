"""The compressed tool listing (`--compress-tools`): mcp-compressor's standard mode, as pure functions.

A backend's tools become `<server>_get_tool_schema` (its description lists every tool, more or less of
each by level) and `<server>_invoke_tool` (`tool_name`, `tool_input`, `full`); level `max` adds
`<server>_list_tools`. Names, arguments, levels and error codes are mcp-compressor 0.38.2's, so a
prompt written for it works unchanged; our errors add the close matches and the schema, so one retry
suffices. At `low` and `medium` each entry shows the arguments with their types, so a simple call needs
no schema fetch, within the anchor's tokens at every level. The doors hold one `CompressedTools` per
backend listing and ask it what to answer."""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from .._errors import MCPSqueezeError
from .._jsonbytes import dumps
from .._unique import unique

__all__ = [
    "CompressedToolError",
    "CompressedTools",
    "Invoke",
    "first_sentence",
    "large_invoke",
    "signature",
]

Level = Literal["low", "medium", "high", "max"]

#: `full`, as the invoke tool describes it: the rule of core/_full.py, in as few tokens as it takes.
FULL_DESCRIPTION = (
    "this same call's kept original, not rerun. None kept: only read-only or idempotent tools rerun; "
    "to rerun others, call without full"
)

INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603  # what mcp-compressor answers for an unknown tool name

#: Levels of `items`/`anyOf`/`oneOf` a signature reads (`string[][]`); deeper is shown as `any`.
MAX_TYPE_DEPTH = 8

#: An invoke's refusal names this many problems (missing or unknown arguments) and counts the rest; a
#: close match is looked for among at most MAX_SUGGESTIONS names of at most MAX_NAME characters.
MAX_PROBLEMS = 10
MAX_SUGGESTIONS = 50
MAX_NAME = 64
#: An invoke whose tool_input has more keys than this is checked in a worker thread by the doors: its
#: check is linear in them, and no request may hold the event loop (docs/limits.md has the figures).
INLINE_KEYS = 10_000

_ABBREVIATIONS = ("e.g.", "i.e.", "etc.", "vs.", "cf.", "approx.", "no.")
_SENTENCE_END = re.compile(r"[.!?](?=\s|$)")
_SPACE = re.compile(r"\s+")


class CompressedToolError(MCPSqueezeError):
    """A call of a frontend tool that cannot be served: answered as a JSON-RPC error with this code."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


@dataclass(frozen=True)
class Invoke:
    """What `<server>_invoke_tool` asked for: the real tool, its arguments, and whether `full` (the
    original of this same call: core/_full.py)."""

    tool: str
    arguments: dict[str, Any]
    full: bool = False


def large_invoke(arguments: object) -> bool:
    """Whether checking an invoke with these arguments belongs off the event loop (`INLINE_KEYS`)."""
    tool_input = arguments.get("tool_input") if isinstance(arguments, dict) else None
    return isinstance(tool_input, dict) and len(tool_input) > INLINE_KEYS


def first_sentence(text: str) -> str:
    """The description's first sentence, whitespace collapsed, without its final period (as the anchor
    shows it at `medium`); an abbreviation such as "e.g." does not end it."""
    text = _SPACE.sub(" ", text).strip()
    for match in _SENTENCE_END.finditer(text):
        head = text[: match.end()]
        if any(head.lower().endswith(" " + a) or head.lower() == a for a in _ABBREVIATIONS):
            continue
        return head[:-1] if head.endswith(".") else head
    return text[:-1] if text.endswith(".") else text


def _type_of(schema: Any, depth: int = 0) -> str:
    """A short type for a property schema: `string`, `number[]`, `string|null`, `object`... Only
    `MAX_TYPE_DEPTH` levels of `items`/`anyOf`/`oneOf` are read: a deeper type is `any`, so a hostile
    schema (a backend may nest 1,000 levels) costs a bounded walk and a short signature."""
    if not isinstance(schema, dict) or depth > MAX_TYPE_DEPTH:
        return "any"
    kind = schema.get("type")
    if isinstance(kind, list):
        return "|".join(str(k) for k in kind) or "any"
    if kind == "array":
        return _type_of(schema.get("items"), depth + 1) + "[]"
    if isinstance(kind, str):
        return kind
    for key in ("anyOf", "oneOf"):
        options = schema.get(key)
        if isinstance(options, list) and options:
            return "|".join(dict.fromkeys(_type_of(o, depth + 1) for o in options))
    if "enum" in schema:
        return "enum"
    if "$ref" in schema or "properties" in schema:
        return "object"
    return "any"


def _properties(tool: Mapping[str, Any]) -> tuple[dict[str, Any], set[str]]:
    schema = tool.get("inputSchema")
    if not isinstance(schema, dict):
        return {}, set()
    props = schema.get("properties")
    required = schema.get("required")
    return (
        props if isinstance(props, dict) else {},
        {r for r in required if isinstance(r, str)} if isinstance(required, list) else set(),
    )


def signature(tool: Mapping[str, Any], *, types: bool = True) -> str:
    """`name(path: string, head?: number)`; without types, the anchor's `name(path, head)`."""
    props, required = _properties(tool)
    if not types:
        return f"{tool.get('name')}({', '.join(props)})"
    args = []
    for name, spec in props.items():
        kind = _type_of(spec)
        if name not in required:  # without `null`, as leaving it out says as much: `string|null` -> `string`
            kind = "|".join(k for k in kind.split("|") if k != "null") or kind
        args.append(f"{name}: {kind}" if name in required else f"{name}?: {kind}")
    return f"{tool.get('name')}({', '.join(args)})"


def _entry(tool: Mapping[str, Any], level: Level) -> str:
    description = tool.get("description") if isinstance(tool.get("description"), str) else ""
    assert isinstance(description, str)
    if level == "max":
        return str(tool.get("name"))
    if level == "high":
        return signature(tool, types=False)
    text = first_sentence(description) if level == "medium" else _SPACE.sub(" ", description).strip()
    return f"{signature(tool)}: {text}" if text else signature(tool)


def _schema_text(schema: Any) -> str:
    """A schema as JSON text, at any depth the proxy parses (the stdlib encoder stops near 1,000)."""
    try:
        return json.dumps(schema, ensure_ascii=False)
    except RecursionError:
        return dumps(schema).decode()


def _close_match(name: str, among: list[str]) -> str | None:
    """The name of `among` closest to `name` (difflib), looked for among a bounded few short names."""
    if len(name) > MAX_NAME:
        return None
    short = [other for other in among[: 4 * MAX_SUGGESTIONS] if len(other) <= MAX_NAME][:MAX_SUGGESTIONS]
    close = difflib.get_close_matches(name, short, n=1, cutoff=0.6)
    return _cut(close[0]) if close else None


def _cut(name: str) -> str:
    return name if len(name) <= MAX_NAME else name[: MAX_NAME - 1] + "…"


@dataclass(frozen=True)
class CompressedTools:
    """One backend's tools behind the compressed frontend of `level` (not "off"), prefixed by `server`
    (built by `of`)."""

    server: str
    level: Level
    tools: tuple[Mapping[str, Any], ...]
    schema_tool: str
    invoke_tool: str
    _list_name: str
    _by_name: dict[str, Mapping[str, Any]] = field(repr=False, compare=False)

    @classmethod
    def of(cls, server: str, level: str, tools: Iterable[Any]) -> CompressedTools:
        kept = tuple(t for t in tools if isinstance(t, dict))
        by_name = {str(t.get("name")): t for t in kept if isinstance(t.get("name"), str)}
        # Named clear of the backend's tools (`_2`, `_3`...), as the recover tool is: a backend tool
        # named `<server>_invoke_tool` is then reached by invoke, never read as our own invoke.
        names = [f"{server}_get_tool_schema", f"{server}_invoke_tool", f"{server}_list_tools"]
        schema, invoke, listed = unique(names, set(by_name))
        return cls(server, level, kept, schema, invoke, listed, by_name)  # type: ignore[arg-type]

    @property
    def list_tool(self) -> str | None:
        return self._list_name if self.level == "max" else None

    def owns(self, name: object) -> bool:
        """Whether a tools/call of `name` is one of the frontend tools (answered or routed here)."""
        return name is not None and name in (self.schema_tool, self.invoke_tool, self.list_tool)

    def listing(self) -> list[dict[str, Any]]:
        """The frontend tools, as tools/list shows them (our recover tool is appended by the door)."""
        entries = "\n".join(_entry(t, self.level) for t in self.tools)
        tools: list[dict[str, Any]] = [
            {
                "name": self.schema_tool,
                "description": (
                    f"Get the input schema of a tool of the {self.server} toolset. Its tools:\n{entries}"
                ),
                "inputSchema": {
                    "type": "object",
                    "properties": {"tool_name": {"type": "string"}},
                    "required": ["tool_name"],
                },
            },
            {
                "name": self.invoke_tool,
                "description": (
                    f"Invoke a tool from the {self.server} toolset (get_tool_schema gives its input schema)."
                ),
                "inputSchema": {
                    "type": "object",
                    "properties": {
                        "tool_name": {"type": "string"},
                        "tool_input": {"type": "object"},
                        "full": {"type": "boolean", "description": FULL_DESCRIPTION},
                    },
                    "required": ["tool_name", "tool_input"],
                },
            },
        ]
        if self.list_tool is not None:
            tools.append(
                {
                    "name": self.list_tool,
                    "description": f"List the {self.server} toolset's tools.",
                    "inputSchema": {"type": "object", "properties": {}},
                }
            )
        return tools

    def schema_answer(self, arguments: object) -> dict[str, Any]:
        """`<server>_get_tool_schema`'s CallToolResult: the tool's signature and whole description, then
        its input schema as JSON."""
        name = arguments.get("tool_name") if isinstance(arguments, dict) else None
        if not isinstance(name, str):
            raise CompressedToolError(INVALID_PARAMS, "missing tool_name")
        tool = self._tool(name)
        description = tool.get("description") if isinstance(tool.get("description"), str) else ""
        head = f"{signature(tool)}: {description}" if description else signature(tool)
        schema = tool.get("inputSchema", {"type": "object"})
        text = f"{head}\n\n{_schema_text(schema)}"
        return {"content": [{"type": "text", "text": text}], "isError": False}

    def list_answer(self) -> dict[str, Any]:
        """`<server>_list_tools` (level `max`): every tool's signature and first sentence."""
        text = "\n".join(_entry(t, "medium") for t in self.tools)
        return {"content": [{"type": "text", "text": text}], "isError": False}

    def invoke(self, arguments: object, also: Iterable[str | None] = ()) -> Invoke:
        """The real call behind `<server>_invoke_tool`; CompressedToolError for an unknown tool or bad input.
        `also`: names the door serves itself (our recover tool), passed on unchecked."""
        if not isinstance(arguments, dict):
            raise CompressedToolError(
                INVALID_PARAMS, "arguments must be an object with tool_name and tool_input"
            )
        name = arguments.get("tool_name")
        if not isinstance(name, str):
            raise CompressedToolError(INVALID_PARAMS, "missing tool_name")
        if name in also and name not in self._by_name and isinstance(arguments.get("tool_input"), dict):
            return Invoke(name, arguments["tool_input"], False)
        tool = self._tool(name)
        tool_input = {} if arguments.get("tool_input") is None else arguments["tool_input"]
        full = arguments.get("full", False)
        if not isinstance(full, bool):
            raise CompressedToolError(INVALID_PARAMS, "full must be true or false")
        if not isinstance(tool_input, dict):
            raise CompressedToolError(
                INVALID_PARAMS,
                f"validation error: tool_input must be a JSON object of {name}'s arguments. "
                + self._schema_hint(tool),
            )
        problems = self._problems(tool, tool_input)
        if problems:
            raise CompressedToolError(
                INVALID_PARAMS, f"validation error: {name}: {'; '.join(problems)}. " + self._schema_hint(tool)
            )
        return Invoke(name, tool_input, full)

    def _tool(self, name: str) -> Mapping[str, Any]:
        tool = self._by_name.get(name)
        if tool is not None:
            return tool
        message = f"tool not found: {json.dumps(name)}"
        close = difflib.get_close_matches(name, list(self._by_name), n=3, cutoff=0.6)
        if close:
            message += f". Close matches: {', '.join(close)}. " + self._schema_hint(self._by_name[close[0]])
        elif self._by_name:
            message += f". The {self.server} tools are: {', '.join(self._by_name)}"
        raise CompressedToolError(INTERNAL_ERROR, message)

    def _problems(self, tool: Mapping[str, Any], given: Mapping[str, Any]) -> list[str]:
        """Missing required arguments and (when the schema allows no others) unknown ones, each with its
        close match. Linear in the input: the first `MAX_PROBLEMS` are named, and close matches are looked
        for among `MAX_SUGGESTIONS` names of at most `MAX_NAME` characters."""
        props, required = _properties(tool)
        order = [*props, *sorted(required - props.keys())]
        missing = [r for r in order if r in required and r not in given]
        schema = tool.get("inputSchema")
        closed = isinstance(schema, dict) and schema.get("additionalProperties") is False
        unknown = [k for k in given if k not in props] if closed or missing else []
        named = [("missing", name) for name in missing]
        if closed:
            named += [("unknown argument", name) for name in unknown]
        problems = []
        for what, name in named[:MAX_PROBLEMS]:
            close = _close_match(name, unknown if what == "missing" else list(props))
            hint = "" if close is None else (" (given {}?)" if what == "missing" else " (did you mean {}?)")
            problems.append(f"{what} {_cut(name)}{hint.format(close)}")
        if len(named) > MAX_PROBLEMS:
            problems.append(f"and {len(named) - MAX_PROBLEMS:,} more")
        return problems

    def _schema_hint(self, tool: Mapping[str, Any]) -> str:
        schema = _schema_text(tool.get("inputSchema", {"type": "object"}))
        return f"{signature(tool)} takes tool_input matching {schema}"
