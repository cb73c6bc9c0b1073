"""The session's ``GET /v1/servers`` answer as plain objects: servers, their tools and command names.
Stdlib-only, no I/O.
"""

from __future__ import annotations

from ._flags import Flag, tool_flags
from ._names import command_names

__all__ = ["Catalog", "ServerInfo", "ToolInfo"]


class ToolInfo:
    """One backend tool: its original name, command name, description and input schema."""

    def __init__(self, command: str, raw: dict[str, object]) -> None:
        """``raw``: the tool's entry in the listing (a string ``name``; anything else may be missing)."""
        self.name = str(raw["name"])
        self.command = command
        description = raw.get("description")
        self.description = description if isinstance(description, str) else ""
        title = raw.get("title")
        self.title = title if isinstance(title, str) else ""
        self.input_schema = raw.get("inputSchema") or {}
        self._flags: list[Flag] | None = None

    @property
    def flags(self) -> list[Flag]:
        if self._flags is None:
            self._flags = tool_flags(self.input_schema)
        return self._flags


class ServerInfo:
    """One backend server of the session, up or down, with its tools sorted by command name."""

    def __init__(self, raw: dict[str, object]) -> None:
        """``raw``: the server's entry in the listing (a string ``name``; odd tool entries are skipped)."""
        self.name = str(raw["name"])
        self.status = str(raw.get("status") or "up")
        error = raw.get("error")
        self.error = error if isinstance(error, str) else None
        tools = raw.get("tools")
        entries = [t for t in tools if isinstance(t, dict)] if isinstance(tools, list) else []
        by_name = {str(t["name"]): t for t in entries if isinstance(t.get("name"), str)}
        names = sorted(command_names(list(by_name)).items())
        self.tools = [ToolInfo(command, by_name[original]) for command, original in names]

    @property
    def up(self) -> bool:
        return self.status == "up"

    def tool(self, typed: str) -> ToolInfo | None:
        """The tool a typed command (kebab name, else the original spelling) stands for."""
        by_command = next((t for t in self.tools if t.command == typed), None)
        return by_command or next((t for t in self.tools if t.name == typed), None)


class Catalog:
    """Everything the session serves: servers with tools, and where the recovery files are."""

    def __init__(self, servers: list[ServerInfo], recovery_dir: str | None = None) -> None:
        self.servers = servers
        self.recovery_dir = recovery_dir

    @classmethod
    def from_json(cls, body: dict[str, object]) -> Catalog:
        """Build from the decoded ``/v1/servers`` body; odd entries are skipped, never fatal."""
        raw_servers = body.get("servers")
        entries = raw_servers if isinstance(raw_servers, list) else []
        servers = [ServerInfo(s) for s in entries if isinstance(s, dict) and isinstance(s.get("name"), str)]
        servers.sort(key=lambda s: s.name)
        recovery_dir = body.get("recovery_dir")
        return cls(servers, recovery_dir if isinstance(recovery_dir, str) else None)

    def server(self, name: str) -> ServerInfo | None:
        return next((s for s in self.servers if s.name == name), None)
