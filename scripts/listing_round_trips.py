#!/usr/bin/env python3
"""What the typed signatures of `--compress-tools medium` save on the replayed session (issue 22, docs/).

    PYTHONPATH=src python scripts/listing_round_trips.py

The 39 calls of scripts/bench_session.py, against the tools the real servers list
(tests/core/fixtures/listing/{fs,git,memory}.json, captured from server-filesystem, mcp-server-git and
server-memory). The rule an agent follows, the anchor's own advice ("Use get_tool_schema for the selected
tool_name before invoking if required fields are unknown"): before the first call of a tool it fetches the
schema unless the listing already says, for every argument the call passes and every required one, its
name, whether it is required, and a type the agent can fill without more (string, number, integer,
boolean, or an array of those). mcp-compressor's medium entry (`read_text_file(path, tail, head)`) says
neither types nor which are required, so every distinct tool costs one fetch; ours
(`read_text_file(path: string, tail?: number, head?: number)`) says both, so only tools taking an object
(`create_entities(entities: object[])`) still need theirs.

Printed: fetches each way, the o200k tokens of those get_tool_schema answers (the answer text, and the
call itself at about the same size as the invoke call that follows), and what the types cost: the extra
tokens of the medium listing on every turn (ours with types against ours without).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import bench_session as bs  # the 39-call session (this script's directory is on sys.path)
from mcpsqueeze.accounting._tokens import count_tokens
from mcpsqueeze.core._compressed import (
    CompressedTools,
    _entry,
    _properties,
    _type_of,
    compact_recover_tool,
    signature,
)

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "core" / "fixtures" / "listing"
PLAIN = {"string", "number", "integer", "boolean"}
CALL_TOKENS = 30  # a get_tool_schema call: {"name": "fs_get_tool_schema", "arguments": {"tool_name": ...}}


def fillable(kind: str) -> bool:
    kinds = kind.removesuffix("[]").split("|")
    return all(k in PLAIN | {"null"} for k in kinds)


def needs_schema(tool: dict[str, Any], arguments: dict[str, Any]) -> bool:
    """With our medium signature: whether an argument passed (or required) has a type the line does not
    spell out (an object, or an array of objects)."""
    props, required = _properties(tool)
    used = set(arguments) | required
    return any(name not in props or not fillable(_type_of(props[name])) for name in used)


def model_view(tools: list[dict[str, Any]]) -> str:
    return json.dumps([{k: t.get(k) for k in ("name", "description", "inputSchema")} for t in tools])


def main() -> int:
    servers = {s: json.loads((FIXTURES / f"{s}.json").read_text())["tools"] for s in ("fs", "git", "memory")}
    by_name = {(s, t["name"]): t for s, tools in servers.items() for t in tools}
    first_calls: dict[tuple[str, str], dict[str, Any]] = {}
    for server, tool, arguments in bs.session(Path("/repo")):
        first_calls.setdefault((server, tool), arguments)
    anchor_fetches = ours_fetches = 0
    anchor_tokens = ours_tokens = 0
    rows = []
    for (server, name), arguments in first_calls.items():
        tool = by_name[(server, name)]
        compact = CompressedTools.of(server, "medium", servers[server])
        answer = count_tokens(compact.schema_answer({"tool_name": name})["content"][0]["text"]) + CALL_TOKENS
        anchor_fetches += 1
        anchor_tokens += answer
        ours = needs_schema(tool, arguments)
        if ours:
            ours_fetches += 1
            ours_tokens += answer
        rows.append((f"{server}:{name}", "fetch" if ours else "-", answer))
    typed = untyped = 0
    for server, tools in servers.items():
        compact = CompressedTools.of(server, "medium", tools)
        listing = [*compact.listing(), compact_recover_tool("squeeze_recover")]
        typed += count_tokens(model_view(listing))
        head = listing[0]["description"].split("\n", 1)[0]  # the line before the entries
        plain = {**listing[0], "description": "\n".join([head, *(_untyped(t) for t in tools)])}
        untyped += count_tokens(model_view([plain, *listing[1:]]))
    calls = len(bs.session(Path("/repo")))
    print(f"replayed session: {calls} calls of {len(first_calls)} distinct tools")
    print(f"{'tool (first call)':<34} {'ours':>6} {'schema answer, tokens':>22}")
    for label, verdict, answer in rows:
        print(f"{label:<34} {verdict:>6} {answer:>22}")
    saved = f"{anchor_fetches - ours_fetches} round trips and {anchor_tokens - ours_tokens:,} tokens saved"
    print(
        f"\nget_tool_schema round trips: mcp-compressor's medium listing {anchor_fetches} "
        f"({anchor_tokens:,} tokens), ours {ours_fetches} ({ours_tokens:,} tokens): {saved}"
    )
    print(
        f"what the types cost: the medium listing (fs+git+memory, with squeeze_recover) is {typed:,} "
        f"tokens with them and {untyped:,} without, +{typed - untyped} on every turn"
    )
    return 0


def _untyped(tool: dict[str, Any]) -> str:
    """Our medium entry with the anchor's untyped signature."""
    line = _entry(tool, "medium")
    return line.replace(signature(tool), signature(tool, types=False), 1)


if __name__ == "__main__":
    sys.exit(main())
