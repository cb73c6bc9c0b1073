"""A stdio MCP backend whose tools are hostile to code generators: `python hostile_backend.py TOOLS.json`.

Lists the tools in TOOLS.json as they are (names, descriptions and parameter names from the Code Mode fuzz
tests) and answers every tools/call with the call it received, as JSON text: `{"tool": ..., "arguments":
...}`, so a test sees exactly which names reached the backend. With `--down` it exits at once (a backend
that cannot start). Stdlib only.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from stdio_backend import reply, serve


def _echo(message: dict[str, Any]) -> None:
    params = message["params"]
    text = json.dumps({"tool": params["name"], "arguments": params.get("arguments") or {}})
    reply(message["id"], {"content": [{"type": "text", "text": text}]})


if __name__ == "__main__":
    if "--down" in sys.argv:
        sys.exit("hostile_backend: down on purpose")
    serve("hostile", json.loads(Path(sys.argv[1]).read_text(encoding="utf-8")), _echo)
