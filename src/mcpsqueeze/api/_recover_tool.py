"""The recover tool as the Python API shows it: the proxy's own definition, in the host-tool shape."""

from __future__ import annotations

from typing import Any

from ..core import recover_tool_definition

__all__ = ["recover_tool_spec"]


def recover_tool_spec(name: str) -> dict[str, Any]:
    """`{"name", "description", "input_schema"}` of the recover tool named `name` (golden-tested)."""
    definition = recover_tool_definition(name)
    return {
        "name": definition["name"],
        "description": definition["description"],
        "input_schema": definition["inputSchema"],
    }
