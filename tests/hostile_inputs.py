"""The hostile inputs of this campaign, shared by its suites (tests/fuzz, tests/faults): listings whose
schemas nest as deep as JSON-RPC allows, an invoke of 20,000 unknown keys against 300 required
arguments, a UTF-8 text of long lines, and a JSON original whose long keys nest deep."""

from __future__ import annotations

from typing import Any


def deep_anyof(depth: int) -> str:
    """A schema of `depth` nested `anyOf`s, as JSON text (the stdlib encoder stops near 1,000)."""
    return '{"anyOf":[' * depth + '{"type":"string"}' + ',{"type":"null"}]}' * depth


def deep_items(depth: int) -> str:
    """An array schema `depth` levels deep, as JSON text."""
    return '{"type":"array","items":' * depth + '{"type":"string"}' + "}" * depth


def tool_text(name: str, schema: str) -> str:
    """A tool whose one argument `x` has the schema `schema` (JSON text), as JSON text."""
    return f'{{"name":"{name}","description":"d","inputSchema":{{"type":"object","properties":{{"x":{schema}}}}}}}'


REQUIRED = [f"argument_{n}" for n in range(300)]
SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {n: {"type": "string"} for n in REQUIRED},
    "required": REQUIRED,
}
WIDE = {"name": "wide", "description": "Three hundred required arguments.", "inputSchema": SCHEMA}
CLOSED = {**WIDE, "name": "closed", "inputSchema": {**SCHEMA, "additionalProperties": False}}
HOSTILE_INPUT = {f"argument_{n}_x": "v" for n in range(20_000)}

#: Long lines (past the 400 characters a match line shows) of two-, three- and four-byte characters.
UTF8 = "".join(f"line {n}: " + "é漢😀x" * 150 + "\n" for n in range(40))


def long_keys_nested_deep(depth: int = 500, key_chars: int = 1500) -> str:
    """~770 KB of JSON: at each of `depth` levels three small values, then the next level under a key of
    `key_chars` characters (its pointers add up to ~560 MB)."""
    level = '{{"a":{i},"b":"word {i}","c":true,"k{i:04d}{pad}":'
    text = "".join(level.format(i=i, pad="x" * (key_chars - 5)) for i in range(depth))
    return text + '"bottom"' + "}" * depth
