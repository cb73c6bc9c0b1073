"""A hand-written handshake-era stdio backend whose tools change (for `--compress-tools` refresh tests).

It lists `grow` and `tool_1` .. `tool_N`; calling `grow` adds the next tool (`{"to": N}`: makes the
tools `tool_1` .. `tool_N`, fewer too) and, unless called with `{"quiet": true}`, sends
notifications/tools/list_changed before answering. `--pages`: one tool per
tools/list page. Not a test module.
"""

from __future__ import annotations

import json
import sys

count = 1
PAGES = "--pages" in sys.argv  # tools/list answers one tool per page


def send(message: dict[str, object]) -> None:
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", **message}) + "\n")
    sys.stdout.flush()


def tools() -> list[dict[str, object]]:
    listed: list[dict[str, object]] = [
        {"name": "grow", "description": "Add a tool.", "inputSchema": {"type": "object"}}
    ]
    for i in range(1, count + 1):
        schema = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
        listed.append({"name": f"tool_{i}", "description": f"Tool number {i}. More.", "inputSchema": schema})
    return listed


for line in sys.stdin:
    message = json.loads(line)
    method = message.get("method")
    if "id" not in message or method is None:
        continue
    params = message.get("params") or {}
    if method == "initialize":
        result: dict[str, object] = {
            "protocolVersion": params["protocolVersion"],
            "capabilities": {"tools": {"listChanged": True}, "prompts": {}},
            "serverInfo": {"name": "changing", "version": "1"},
        }
    elif method == "tools/list" and PAGES:
        at = int(params.get("cursor") or 0)
        result = {"tools": tools()[at : at + 1]}
        if at + 1 < len(tools()):
            result["nextCursor"] = str(at + 1)
    elif method == "tools/list":
        result = {"tools": tools()}
    elif method == "prompts/list":
        result = {"prompts": [{"name": "hello", "description": "A prompt, untouched."}]}
    elif method == "tools/call" and params.get("name") == "grow":
        arguments = params.get("arguments") or {}
        count = int(arguments.get("to", count + 1))
        if not arguments.get("quiet"):
            send({"method": "notifications/tools/list_changed"})
        result = {"content": [{"type": "text", "text": f"now {count} tools"}]}
    elif method == "tools/call":
        result = {"content": [{"type": "text", "text": json.dumps(params)}]}
    else:
        send({"id": message["id"], "error": {"code": -32601, "message": "Method not found"}})
        continue
    send({"id": message["id"], "result": result})
