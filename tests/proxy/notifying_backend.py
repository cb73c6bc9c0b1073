"""A hand-written handshake-era stdio backend that announces changes (for `subscriptions/listen` tests).

Its `touch` tool sends notifications/tools/list_changed and notifications/resources/updated for every
subscribed URI before answering. Not a test module (no test_ prefix).
"""

from __future__ import annotations

import json
import sys

subscribed: set[str] = set()


def send(message: dict[str, object]) -> None:
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", **message}) + "\n")
    sys.stdout.flush()


for line in sys.stdin:
    message = json.loads(line)
    method = message.get("method")
    if "id" not in message or method is None:
        continue
    params = message.get("params") or {}
    if method == "initialize":
        capabilities = {"tools": {"listChanged": True}, "resources": {"subscribe": True, "listChanged": True}}
        result: dict[str, object] = {
            "protocolVersion": params["protocolVersion"],
            "capabilities": capabilities,
            "serverInfo": {"name": "notifying", "version": "1"},
        }
    elif method == "tools/list":
        result = {"tools": [{"name": "touch", "inputSchema": {"type": "object"}}]}
    elif method == "resources/subscribe":
        subscribed.add(params["uri"])
        result = {}
    elif method == "resources/unsubscribe":
        subscribed.discard(params["uri"])
        result = {}
    elif method == "tools/call":
        send({"method": "notifications/tools/list_changed"})
        for uri in sorted(subscribed):
            send({"method": "notifications/resources/updated", "params": {"uri": uri}})
        result = {"content": [{"type": "text", "text": f"touched {len(subscribed)}"}]}
    else:
        send({"id": message["id"], "error": {"code": -32601, "message": f"no {method}"}})
        continue
    send({"id": message["id"], "result": result})
