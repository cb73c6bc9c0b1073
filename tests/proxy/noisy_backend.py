"""A hand-written stdio MCP backend that misbehaves on purpose (used by the failure tests).

It prints one line of garbage before each tools/call answer, and its `odd` tool returns wire details an
SDK model would normalise away: unknown fields, explicit nulls and an integer beyond 64 bits. `deep`
answers nested 10,000 levels deep, `nan` sends a line with `"id":NaN` first, `hang` never answers.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from stdio_backend import reply, serve


def on_call(message: dict[str, Any]) -> None:
    params = message["params"]
    if "--with-squeeze-recover" not in sys.argv:
        sys.stdout.write("this line is not JSON\n")
        sys.stdout.flush()
    if params["name"] == "huge":  # ~20 MB of JSON text, at once
        rows = [{"id": i, "name": f"row {i}", "payload": "x" * 150} for i in range(100_000)]
        reply(message["id"], {"content": [{"type": "text", "text": json.dumps(rows)}]})
    elif params["name"] == "surrogate":  # valid JSON: a lone surrogate escape, as json.dumps writes it
        size = int(params["arguments"].get("repeat", 1))
        reply(message["id"], {"content": [{"type": "text", "text": "a\ud800b " * size}]})
    elif params["name"] == "deep":  # valid JSON-RPC framing, but nested 10,000 deep: unparseable
        depth = 10_000
        sys.stdout.write(f'{{"jsonrpc":"2.0","id":{json.dumps(message["id"])},"result":')
        sys.stdout.write("[" * depth + "]" * depth + "}\n")
        sys.stdout.flush()
    elif params["name"] == "nan":  # the campaign's line: a NaN id and a lone-surrogate escape
        sys.stdout.write('{"jsonrpc":"2.0","id":NaN,"result":{"text":"\\ud800"}}\n')
        reply(message["id"], {"content": [{"type": "text", "text": "after nan"}]})
    elif params["name"] == "hang":
        return
    elif params["name"] == "odd":
        sys.stdout.write(
            f'{{"jsonrpc":"2.0","id":{json.dumps(message["id"])},"result":{{"content":[{{"type":"text",'
            '"text":"odd"}],"x-unknown":{"nested":null},"big":123456789012345678901234567890,'
            '"_meta":{"vendor/flag":true}}}\n'
        )
        sys.stdout.flush()
    else:
        reply(message["id"], {"content": [{"type": "text", "text": params["arguments"]["text"]}]})


tools = [{"name": "echo", "inputSchema": {"type": "object"}}]
if "--with-squeeze-recover" in sys.argv:
    tools.append({"name": "squeeze_recover", "inputSchema": {"type": "object"}})
serve("noisy", tools, on_call)
