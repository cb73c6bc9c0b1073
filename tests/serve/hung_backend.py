"""A stdio MCP backend whose only tool never answers and which ignores SIGTERM (the signal tests use it).

argv[1] is a file it writes its pid to when a call arrives, so a test knows the call is in flight.
"""

from __future__ import annotations

import json
import os
import signal
import sys

signal.signal(signal.SIGTERM, signal.SIG_IGN)
marker = sys.argv[1]


def reply(message_id: object, result: object) -> None:
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": message_id, "result": result}) + "\n")
    sys.stdout.flush()


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
                "serverInfo": {"name": "hung", "version": "1"},
            },
        )
    elif method == "tools/list":
        reply(message["id"], {"tools": [{"name": "hang", "inputSchema": {"type": "object"}}]})
    elif method == "tools/call":
        with open(marker, "w") as out:
            out.write(str(os.getpid()))
    else:
        reply(message["id"], {})
while True:  # stdin closed: still hang, as a wedged server would
    signal.pause()
