"""Settings: everything the CLI parsed, as one plain object (no I/O)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from .._paths import default_recovery_dir
from ._policy import DEFAULT_BUDGET, DEFAULT_SHRINK_ABOVE, MIN_BUDGET, MIN_TRUNCATE_CHARS, PolicySet

if TYPE_CHECKING:
    from ._oauth import OAuthClient

__all__ = [
    "DEFAULT_BUDGET",
    "DEFAULT_SHRINK_ABOVE",
    "MIN_BUDGET",
    "MIN_TRUNCATE_CHARS",
    "Settings",
    "default_recovery_dir",
]


@dataclass
class Settings:
    target: list[str]  # backend command argv, or [URL]
    headers: dict[str, str] = field(default_factory=dict)
    oauth: OAuthClient | None = None  # URL backend: pre-registered client, CIMD URL, in-session login
    timeout: float | None = None
    transport: Literal["stdio", "streamable-http"] = "stdio"
    host: str = "127.0.0.1"
    port: int = 8765
    token_file: Path | None = None  # streamable-http frontend: require this bearer token
    max_sessions: int = 16  # streamable-http frontend: sessions (each with its own backend) at once
    max_body: int = 16 * 1024 * 1024  # HTTP doors: largest request body, bytes (transports/_limits.py)
    server_name: str = "backend"
    dedup: bool = True
    shrink: bool = True
    budget: int = DEFAULT_BUDGET
    truncate_chars: int | None = None  # MCP Squeeze's per-text-block limit, on top of the budget
    shrink_above: int | None = DEFAULT_SHRINK_ABOVE  # size previews by value above this (None: budget only)
    toonify: bool = False  # render JSON results that were not shrunk as TOON (original kept)
    query: str | None = None  # JMESPath projection of JSON results (a per-tool policy, usually)
    drop_duplicate_structured: bool = False  # drop structuredContent equal to the text (opt-in)
    recovery: Literal["memory", "files", "both"] = "both"
    recovery_dir: Path = field(default_factory=default_recovery_dir)
    cache_ttl: float = 300.0
    cache_entries: int = 32
    cache_bytes: int = 32 * 1024 * 1024
    retention: float | None = 24 * 3600.0
    jobs: int = 4
    stats_file: Path | None = None
    policies: PolicySet = field(default_factory=PolicySet)  # per-tool rules from the config file
    quiet: bool = False  # no session summary on exit
    recovery_url: str | None = None  # redis://HOST:PORT/DB: originals shared by every replica
    tenant: str | None = None  # whose originals these are when the token names no tenant

    @property
    def is_url(self) -> bool:
        return len(self.target) == 1 and self.target[0].startswith(("http://", "https://"))
