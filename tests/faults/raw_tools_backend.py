"""A stdio MCP backend that lists the tools of a JSON file byte for byte: `python raw_tools_backend.py
TOOLS.json`. The file's text is spliced into the tools/list answer unparsed, so a listing may nest as
deep as JSON-RPC allows (the stdlib encoder stops near 1,000 levels). Every tools/call is answered with
the call it received, as JSON text (`{"tool": ..., "arguments": ...}`): a test sees which tool ran.
Stdlib only."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from stdio_backend import reply


def main(tools: str) -> None:
    for line in sys.stdin:
        message: dict[str, Any] = json.loads(line)
        method = message.get("method")
        if "id" not in message or method is None:
            continue
        if method == "tools/list":
            sys.stdout.write(
                f'{{"jsonrpc":"2.0","id":{json.dumps(message["id"])},"result":{{"tools":{tools}}}}}\n'
            )
            sys.stdout.flush()
        elif method == "initialize":
            reply(
                message["id"],
                {
                    "protocolVersion": message["params"]["protocolVersion"],
                    "capabilities": {"tools": {}},
                    "serverInfo": {"name": "raw", "version": "1"},
                },
            )
        elif method == "tools/call":
            params = message["params"]
            text = json.dumps({"tool": params["name"], "arguments": params.get("arguments") or {}})
            reply(message["id"], {"content": [{"type": "text", "text": text}]})
        else:
            reply(message["id"], {})


if __name__ == "__main__":
    main(Path(sys.argv[1]).read_text(encoding="utf-8"))
