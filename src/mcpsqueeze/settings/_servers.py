"""Which backends a session serves: the usual `mcpServers` JSON, or one `-n NAME -- COMMAND|URL`. Pure."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .._errors import UsageError
from .._net import is_url
from ._depth import MAX_CONFIG_DEPTH, too_deep
from ._oauth_client import OAUTH_KEYS, OAuthClient, oauth_over
from ._policy import pattern_matches
from ._settings import COMPRESS_LEVELS

__all__ = ["ServerSpec", "ToolFilter", "parse_config", "parse_servers", "spec_from_argv"]


@dataclass(frozen=True)
class ServerSpec:
    name: str
    command: str | None = None
    args: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)
    cwd: str | None = None
    url: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    oauth: OAuthClient | None = None  # a URL entry's oauth_* keys (see `_oauth_keys`)
    compress_tools: str | None = None  # this server's --compress-tools level (None: the session's)


@dataclass(frozen=True)
class ToolFilter:
    """--include-tools / --exclude-tools: comma-separated glob patterns, optionally `server:tool`."""

    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()

    def allows(self, server: str, tool: str) -> bool:
        def hit(patterns: tuple[str, ...]) -> bool:
            return any(pattern_matches(p, server, tool) for p in patterns)

        if self.include and not hit(self.include):
            return False
        return not hit(self.exclude)


def _name_ok(name: str) -> bool:
    return bool(name) and all(c.isalnum() or c in "-_" for c in name) and not name.startswith("-")


def _strings(value: Any, what: str) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in value.items()
    ):
        raise UsageError(f"{what} must be an object of strings")
    return dict(value)


def _oauth_keys(entry: dict[str, Any], where: str) -> OAuthClient | None:
    """A URL entry's OAuth client from its `OAUTH_KEYS` (a secret only as a file: never in the config)."""
    given = {key: entry[key] for key in entry if key.startswith("oauth_")}
    unknown = sorted(set(given) - set(OAUTH_KEYS))
    if unknown:
        raise UsageError(f"{where}: unknown key {unknown[0]!r} (OAuth keys: {', '.join(OAUTH_KEYS)})")
    for key, value in given.items():
        if not isinstance(value, str) or not value:
            raise UsageError(f"{where}: {key} must be a non-empty string")
    secret = given.get("oauth_client_secret_file")
    if secret:
        given["oauth_client_secret_file"] = Path(secret).expanduser()
    try:
        return oauth_over(None, given)
    except UsageError as exc:
        raise UsageError(f"{where}: {exc}") from exc


def parse_config(text: str, source: str = "config") -> list[ServerSpec]:
    if too_deep(text, toml=False):
        raise UsageError(f"{source} nests objects or arrays deeper than {MAX_CONFIG_DEPTH} levels")
    try:
        document = json.loads(text)
    except ValueError as exc:
        raise UsageError(f"{source} is not valid JSON: {exc}") from exc
    return parse_servers(document.get("mcpServers") if isinstance(document, dict) else None, source)


def parse_servers(servers: Any, source: str = "config") -> list[ServerSpec]:
    """The `mcpServers` table (from servers JSON or a TOML config file's `[mcpServers.NAME]`)."""
    if not isinstance(servers, dict) or not servers:
        raise UsageError(
            f'{source} needs a non-empty "mcpServers" object: {{"mcpServers": {{"name": {{...}}}}}}'
        )
    specs = []
    for name, entry in servers.items():
        where = f"{source}: server {name!r}"
        if not _name_ok(name):
            raise UsageError(f"{where}: names may contain only letters, digits, '-' and '_'")
        if not isinstance(entry, dict):
            raise UsageError(f"{where} must be an object with a command or a url")
        level = entry.get("compress_tools")  # this server's listing level (None: the session's)
        if level is False:
            level = "off"
        elif level is not None and level not in COMPRESS_LEVELS:
            raise UsageError(f"{where}: compress_tools must be one of {', '.join(COMPRESS_LEVELS)}")
        if isinstance(entry.get("url"), str):
            headers = _strings(entry.get("headers"), f"{where} headers")
            oauth = _oauth_keys(entry, where)
            url = entry["url"]
            specs.append(ServerSpec(name, url=url, headers=headers, oauth=oauth, compress_tools=level))
            continue
        if any(key.startswith("oauth_") for key in entry):
            raise UsageError(f"{where}: oauth_* keys are for URL backends (a command needs no OAuth)")
        command = entry.get("command")
        if not isinstance(command, str) or not command:
            raise UsageError(f'{where} needs "command" (with optional "args", "env", "cwd") or "url"')
        args = entry.get("args", [])
        if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
            raise UsageError(f"{where}: args must be a list of strings")
        cwd = entry.get("cwd")
        if cwd is not None and not isinstance(cwd, str):
            raise UsageError(f"{where}: cwd must be a string")
        env = _strings(entry.get("env"), f"{where} env")
        specs.append(ServerSpec(name, command, tuple(args), env, cwd, compress_tools=level))
    return specs


def spec_from_argv(
    name: str, target: list[str], headers: dict[str, str] | None = None, oauth: OAuthClient | None = None
) -> ServerSpec:
    if not _name_ok(name):
        raise UsageError(f"server name {name!r} may contain only letters, digits, '-' and '_'")
    if not target:
        raise UsageError("give the backend after '--': a command with its arguments, or a URL")
    if is_url(target):
        return ServerSpec(name, url=target[0], headers=headers or {}, oauth=oauth)
    return ServerSpec(name, target[0], tuple(target[1:]))
