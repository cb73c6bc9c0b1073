"""A stdlib-only stdio MCP server for load: tool `blob(size, seed)` returns about `size` characters of JSON.

``python -m mcpsqueeze.demo.bulk``. No SDK, so it starts in milliseconds and costs next to nothing to
measure around (benchmarks, exit-time tests); every payload is a pure function of its arguments.
"""

from __future__ import annotations

import json
import random
import sys

_WORDS = ("alpha", "beta", "gamma", "delta", "lorem", "ipsum", "dolor", "sit", "amet", "error", "ok")


def blob(size: int, seed: int) -> str:
    """A JSON array of records, about `size` characters long."""
    rng = random.Random(seed)
    rows: list[str] = []
    total = 2
    i = 0
    while total < size:
        row = json.dumps(
            {
                "id": i,
                "name": f"item-{seed}-{i}",
                "email": f"user{i}@example.com",
                "status": rng.choice(("open", "closed", "pending")),
                "score": round(rng.random(), 6),
                "bio": " ".join(rng.choice(_WORDS) for _ in range(rng.randint(5, 30))),
            }
        )
        rows.append(row)
        total += len(row) + 1
        i += 1
    return "[" + ",".join(rows) + "]"


def _reply(message_id: object, result: object) -> None:
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": message_id, "result": result}) + "\n")
    sys.stdout.flush()


TOOL = {
    "name": "blob",
    "description": "About `size` characters of JSON records",
    "inputSchema": {
        "type": "object",
        "properties": {"size": {"type": "integer"}, "seed": {"type": "integer"}},
        "required": ["size"],
    },
}


def main() -> None:
    for line in sys.stdin:
        if not line.strip():
            continue
        message = json.loads(line)
        method = message.get("method")
        if "id" not in message or method is None:
            continue
        if method == "initialize":
            info = {"name": "bulk", "version": "1"}
            version = message["params"]["protocolVersion"]
            _reply(
                message["id"], {"protocolVersion": version, "capabilities": {"tools": {}}, "serverInfo": info}
            )
        elif method == "tools/list":
            _reply(message["id"], {"tools": [TOOL]})
        elif method == "tools/call":
            args = message["params"].get("arguments") or {}
            text = blob(int(args.get("size", 1000)), int(args.get("seed", 0)))
            _reply(message["id"], {"content": [{"type": "text", "text": text}]})
        else:
            _reply(message["id"], {})


if __name__ == "__main__":
    main()
