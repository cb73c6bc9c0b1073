"""A stdio MCP backend whose one tool, `count`, records each call in a marker file (to prove none happened)."""

from __future__ import annotations

import sys
from pathlib import Path

from mcp.server.mcpserver import MCPServer

marker = Path(sys.argv[1])
server = MCPServer("counting")


@server.tool(structured_output=False)
def count() -> str:
    """Count this call."""
    calls = int(marker.read_text()) + 1 if marker.exists() else 1
    marker.write_text(str(calls))
    return str(calls)


if __name__ == "__main__":
    server.run("stdio")
