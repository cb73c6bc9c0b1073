"""A tiny stdio MCP backend (standard library only, so hundreds of sessions start fast).

Its one tool `page` returns a deterministic JSON document built from its arguments, so a test can check
every result, shrunk or recovered, against what it must be.
"""

from __future__ import annotations

import json
import sys

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


def reply(message_id: object, result: object) -> None:
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": message_id, "result": result}) + "\n")
    sys.stdout.flush()


def main() -> None:
    for line in sys.stdin:
        message = json.loads(line)
        method = message.get("method")
        if "id" not in message or method is None:
            continue
        if method == "initialize":
            reply(
                message["id"],
                {
                    "protocolVersion": message["params"]["protocolVersion"],
                    "capabilities": {"tools": {}},
                    "serverInfo": {"name": "pages", "version": "1"},
                },
            )
        elif method == "tools/list":
            schema = {
                "type": "object",
                "properties": {"key": {"type": "string"}, "size": {"type": "integer"}},
            }
            tools = [{"name": "page", "inputSchema": schema}]
            if OWN_RECOVER:
                tools.append({"name": "squeeze_recover", "inputSchema": {"type": "object"}})
            reply(message["id"], {"tools": tools})
        elif method == "tools/call" and message["params"].get("name") == "squeeze_recover":
            reply(message["id"], {"content": [{"type": "text", "text": "the backend's own squeeze_recover"}]})
        elif method == "tools/call":
            args = message["params"].get("arguments") or {}
            text = page(str(args.get("key", "")), int(args.get("size", 100)))
            reply(message["id"], {"content": [{"type": "text", "text": text}], "isError": False})
        else:
            reply(message["id"], {})


if __name__ == "__main__":
    main()
