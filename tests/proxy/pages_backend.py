"""A tiny stdio MCP backend (standard library only, so hundreds of sessions start fast).

Its one tool `page` returns a deterministic JSON document built from its arguments, so a test can check
every result, shrunk or recovered, against what it must be.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from stdio_backend import reply, serve

# `--own-recover`: the backend has a tool named squeeze_recover too (another mcpsqueeze, say)
OWN_RECOVER = "--own-recover" in sys.argv


def page(key: str, size: int) -> str:
    """About `size` characters of JSON that only `key` and `size` determine."""
    rows = []
    i = 0
    while sum(len(r) for r in rows) < size:
        rows.append(json.dumps({"key": key, "row": i, "body": f"{key}-{i}-" + "abcdefghij" * 4}))
        i += 1
    return "[" + ",".join(rows) + "]"


def on_call(message: dict[str, Any]) -> None:
    if message["params"].get("name") == "squeeze_recover":
        reply(message["id"], {"content": [{"type": "text", "text": "the backend's own squeeze_recover"}]})
        return
    args = message["params"].get("arguments") or {}
    text = page(str(args.get("key", "")), int(args.get("size", 100)))
    reply(message["id"], {"content": [{"type": "text", "text": text}], "isError": False})


def main() -> None:
    schema = {"type": "object", "properties": {"key": {"type": "string"}, "size": {"type": "integer"}}}
    tools = [{"name": "page", "inputSchema": schema}]
    if OWN_RECOVER:
        tools.append({"name": "squeeze_recover", "inputSchema": {"type": "object"}})
    serve("pages", tools, on_call)


if __name__ == "__main__":
    main()
