"""From a tool's JSON input schema to typed parameters, and from MCP names to identifiers. Pure."""

from __future__ import annotations

import json
import keyword
import math
import re
import sys
from dataclasses import dataclass
from typing import Any

from .._unique import unique

__all__ = ["MISSING", "Param", "Tool", "camel", "py_type", "snake", "tools_of", "ts_type"]

MISSING: Any = object()  # no default in the schema

_TS_RESERVED = frozenset(
    [
        "break",
        "case",
        "catch",
        "class",
        "const",
        "continue",
        "debugger",
        "default",
        "delete",
        "do",
        "else",
        "enum",
        "export",
        "extends",
        "false",
        "finally",
        "for",
        "function",
        "if",
        "import",
        "in",
        "instanceof",
        "new",
        "null",
        "return",
        "super",
        "switch",
        "this",
        "throw",
        "true",
        "try",
        "typeof",
        "var",
        "void",
        "while",
        "with",
        "let",
        "static",
        "yield",
        "await",
        "implements",
        "interface",
        "package",
        "private",
        "protected",
        "public",
        "arguments",
        "eval",
    ]
)


def _words(name: str) -> list[str]:
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", name)
    return [w for w in re.split(r"[^A-Za-z0-9]+", spaced) if w]


def snake(name: str) -> str:
    """`search-issues`, `searchIssues` -> `search_issues`; a valid, non-keyword Python identifier."""
    ident = "_".join(w.lower() for w in _words(name)) or "_"
    if ident[0].isdigit():
        ident = "_" + ident
    return ident + "_" if keyword.iskeyword(ident) or keyword.issoftkeyword(ident) else ident


def camel(name: str) -> str:
    """`search_issues`, `search-issues` -> `searchIssues`; a valid, non-reserved TypeScript identifier."""
    words = _words(name)
    if not words:
        return "_"
    ident = words[0][0].lower() + words[0][1:] + "".join(w[0].upper() + w[1:] for w in words[1:])
    if ident[0].isdigit():
        ident = "_" + ident
    return ident + "_" if ident in _TS_RESERVED else ident


# Members every JavaScript object inherits: `args.toString` is a function even when the caller passed no
# `toString`, so a parameter named like one gets a suffix (`toString_`), as a reserved word does.
_OBJECT_MEMBERS = frozenset(
    [
        "constructor",
        "hasOwnProperty",
        "isPrototypeOf",
        "propertyIsEnumerable",
        "toLocaleString",
        "toString",
        "valueOf",
    ]  # `__proto__` and `__defineGetter__` lose their underscores in camel(): `proto`, `defineGetter`
)


def module_name(server: str, reserved: set[str]) -> str:
    """A Python module name for a server that never shadows the standard library or the runtime."""
    name = snake(server)
    if name in sys.stdlib_module_names or name in reserved:
        name += "_server"
    return name


def _types(schema: Any) -> list[Any]:
    if not isinstance(schema, dict):
        return []
    if "enum" in schema and isinstance(schema["enum"], list) and schema["enum"]:
        return [("enum", schema["enum"])]
    if "const" in schema:
        return [("enum", [schema["const"]])]
    for key in ("anyOf", "oneOf"):
        if isinstance(schema.get(key), list):
            return [t for sub in schema[key] for t in _types(sub)] or [("any", None)]
    kind = schema.get("type")
    kinds = kind if isinstance(kind, list) else [kind]
    return [(k, schema) for k in kinds if isinstance(k, str)] or [("any", None)]


def _union(parts: list[str], any_name: str, sep: str) -> str:
    unique_parts = list(dict.fromkeys(parts))
    if any_name in unique_parts:
        return any_name
    return sep.join(unique_parts) if unique_parts else any_name


def py_type(schema: Any) -> str:
    parts = []
    for kind, detail in _types(schema):
        if kind == "enum":
            literals = [v for v in detail if isinstance(v, str | int | bool) or v is None]
            shown = [json.dumps(v) if isinstance(v, str) else repr(v) for v in literals]
            parts.append(f"Literal[{', '.join(shown)}]" if literals else "Any")
        elif kind == "array":
            parts.append(f"list[{py_type(detail.get('items'))}]")
        else:
            parts.append(
                {"string": "str", "integer": "int", "number": "float", "boolean": "bool", "null": "None"}.get(
                    kind, "dict[str, Any]" if kind == "object" else "Any"
                )
            )
    return _union(parts, "Any", " | ")


def _plain_literal(value: Any) -> bool:
    """A value TypeScript can name as a literal type (not NaN, an object or an array)."""
    if isinstance(value, float):
        return math.isfinite(value)
    return value is None or isinstance(value, str | int | bool)


def ts_type(schema: Any) -> str:
    parts = []
    for kind, detail in _types(schema):
        if kind == "enum":
            literal = all(_plain_literal(v) for v in detail)
            parts.append(" | ".join(json.dumps(v) for v in detail) if literal else "unknown")
        elif kind == "array":
            inner = ts_type(detail.get("items"))
            parts.append(f"({inner})[]" if " " in inner else f"{inner}[]")
        else:
            parts.append(
                {"string": "string", "integer": "number", "number": "number", "boolean": "boolean"}.get(
                    kind, {"null": "null", "object": "Record<string, unknown>"}.get(kind, "unknown")
                )
            )
    return _union(parts, "unknown", " | ")


@dataclass(frozen=True)
class Param:
    name: str  # as the tool names it (sent on the wire)
    py: str  # snake_case identifier
    ts: str  # camelCase identifier
    schema: Any
    required: bool
    default: Any = MISSING
    description: str = ""


@dataclass(frozen=True)
class Tool:
    name: str
    py: str
    ts: str
    description: str
    params: tuple[Param, ...]


def _params(input_schema: Any) -> tuple[Param, ...]:
    schema: dict[str, Any] = input_schema if isinstance(input_schema, dict) else {}
    found = schema.get("properties")
    props: dict[str, Any] = found if isinstance(found, dict) else {}
    required = set(schema.get("required") or []) if isinstance(schema.get("required"), list) else set()
    names = list(props)
    # required first (in schema order), then the optional ones: Python needs defaults last
    names.sort(key=lambda n: n not in required)
    pys = unique([snake(n) for n in names])
    tss = unique([ts + "_" if ts in _OBJECT_MEMBERS else ts for ts in map(camel, names)])
    out = []
    for name, py, ts in zip(names, pys, tss, strict=True):
        prop = props[name] if isinstance(props[name], dict) else {}
        description = prop.get("description") or prop.get("title") or ""
        text = description if isinstance(description, str) else ""
        out.append(Param(name, py, ts, prop, name in required, prop.get("default", MISSING), text))
    return tuple(out)


def tools_of(listing: list[dict[str, Any]], reserved: set[str]) -> list[Tool]:
    """Tools of one server, with identifiers unique within its module (and not clashing with `reserved`)."""
    names = [str(t.get("name", "")) for t in listing]
    pys = unique([snake(n) for n in names], reserved)
    tss = unique([camel(n) for n in names], {camel(r) for r in reserved})
    tools = []
    for tool, name, py, ts in zip(listing, names, pys, tss, strict=True):
        description = tool.get("description") or tool.get("title") or ""
        schema = tool.get("inputSchema", tool.get("input_schema"))
        tools.append(Tool(name, py, ts, description if isinstance(description, str) else "", _params(schema)))
    return tools
