"""The library doors onto the proxy's pipeline: host tools (`shrink_tools`), a result in hand
(`Squeezer`) and an MCP client of your servers (`Client`). Re-exported lazily by `mcpsqueeze`."""

from __future__ import annotations

from ._client import Client, ToolError
from ._squeezer import Squeezer
from ._toolset import Toolset, shrink_tools

__all__ = ["Client", "Squeezer", "ToolError", "Toolset", "shrink_tools"]
