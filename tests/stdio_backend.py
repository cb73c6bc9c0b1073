"""The JSON-RPC loop of the hand-written stdio MCP backends (tests/proxy/noisy_backend.py and
tests/serve/hung_backend.py misbehave on purpose; tests/proxy/pages_backend.py serves deterministic
pages): answer the handshake and tools/list, hand each tools/call to the backend's own handler, `{}` to
anything else; notifications are ignored. Stdlib only."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import Any


def reply(message_id: object, result: object) -> None:
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": message_id, "result": result}) + "\n")
    sys.stdout.flush()


def serve(name: str, tools: list[dict[str, Any]], on_call: Callable[[dict[str, Any]], None]) -> None:
    """Answer stdin's requests until it closes; `on_call` gets each tools/call message and replies itself
    (or never does)."""
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
                    "serverInfo": {"name": name, "version": "1"},
                },
            )
        elif method == "tools/list":
            reply(message["id"], {"tools": tools})
        elif method == "tools/call":
            on_call(message)
        else:
            reply(message["id"], {})
