"""The config file: defaults and per-tool policies a user would otherwise repeat in every client config.

TOML (read with the standard library's `tomllib`), found at `--config FILE`, else `MCPSQUEEZE_CONFIG`,
else `user_config_dir("mcpsqueeze")/config.toml` when it exists::

    [defaults]                  # any of DEFAULT_KEYS; flags and MCPSQUEEZE_* variables override these
    budget = 8000
    retention = "7d"

    [policies."demo:search_issues"]   # fnmatch glob on server:tool (no ':' = the tool on any server)
    budget = 4000
    [policies."*:read_file"]
    shrink = false

    [mcpServers.demo]           # optional, for `serve` (and the Python Client); as in servers.json
    command = "python"
    args = ["-m", "mcpsqueeze.demo.server"]

A file whose first character is `{` is the older servers JSON (`serve --config servers.json`): it
carries servers only. Pure apart from reading the one file; used by the CLI and the Python API alike
(`load_config(path).policy_for(server, tool)`).
"""

from __future__ import annotations

import dataclasses
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .._errors import UsageError
from .._paths import default_config_path
from ._policy import POLICY_KEYS, Policy, PolicyRule, PolicySet
from ._settings import COMPRESS_LEVELS, TOOL_PREFIX_RE, Settings

__all__ = [
    "CONFIG_ENV",
    "DEFAULT_KEYS",
    "Config",
    "ConfigError",
    "default_config_path",
    "find_config",
    "is_servers_json",
    "load_config",
    "parse_config_text",
]

CONFIG_ENV = "MCPSQUEEZE_CONFIG"
_TOP_KEYS = ("defaults", "policies", "mcpServers")


class ConfigError(UsageError):
    """The config file cannot be used; the message names the file and, when known, the line."""


def find_config(flag: Path | None, environ: Mapping[str, str] | None = None) -> tuple[Path | None, str]:
    """The config file to read and how it was chosen: `--config`, the variable, or the default place.

    A named file must exist; the default place is used only when a file is there.
    """
    env = os.environ if environ is None else environ
    if flag is not None:
        return flag, "--config"
    if env.get(CONFIG_ENV):
        return Path(env[CONFIG_ENV]), CONFIG_ENV
    path = default_config_path()
    return (path, "default") if path.is_file() else (None, "none")


def is_servers_json(text: str) -> bool:
    """The older `{"mcpServers": ...}` JSON (a TOML document cannot start with `{`)."""
    return text.lstrip().startswith("{")


# -- [defaults] values: key -> checker returning the Settings value ------------------------------------


def _duration(value: Any, *, allow_off: bool) -> float | None:
    from ..recovery import parse_duration

    if isinstance(value, bool):
        raise ValueError("must be a duration such as 30s, 90m, 24h or 7d")
    if allow_off and isinstance(value, str) and value.strip().lower() in ("off", "never"):
        return None  # keep forever: the same words, the same meaning as the flags (recovery.parse_keep)
    if value in (0, "0"):
        raise ValueError("0 is ambiguous; write 'off' to keep forever, or a positive duration such as 24h")
    if isinstance(value, int | float):
        if value <= 0:
            raise ValueError("must be positive")
        return float(value)
    if not isinstance(value, str):
        raise ValueError("must be a duration such as 30s, 90m, 24h or 7d")
    try:
        return parse_duration(value)
    except UsageError as exc:
        raise ValueError(str(exc)) from exc


def _positive_int(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError("must be a whole number of at least 1")
    return value


def _size(value: Any) -> int:
    from ..recovery import parse_size

    if isinstance(value, int) and not isinstance(value, bool) and value > 0:
        return value
    if not isinstance(value, str):
        raise ValueError("must be a size such as 32M or 1G")
    try:
        return parse_size(value)
    except UsageError as exc:
        raise ValueError(str(exc)) from exc


def _path(value: Any) -> Path:
    if not isinstance(value, str) or not value:
        raise ValueError("must be a path string")
    return Path(value).expanduser()


def _recovery(value: Any) -> str:
    if value not in ("memory", "files", "both"):
        raise ValueError('must be "memory", "files" or "both"')
    return str(value)


def _timeout(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
        raise ValueError("must be a positive number of seconds")
    return float(value)


def _recovery_url(value: Any) -> str:
    if not isinstance(value, str) or not value.startswith(("redis://", "rediss://", "unix://")):
        raise ValueError('must be a Redis URL such as "redis://127.0.0.1:6379/0"')
    return value


def _tenant(value: Any) -> str:
    from ..recovery import TENANT_RE

    if not isinstance(value, str) or not TENANT_RE.match(value):
        raise ValueError("must be 1-64 letters, digits or _.@-")
    return value


def _compress_tools(value: Any) -> str:
    if value is False:
        return "off"
    if value not in COMPRESS_LEVELS:
        raise ValueError(f"must be one of {', '.join(COMPRESS_LEVELS)}")
    return str(value)


def _tool_prefix(value: Any) -> str:
    if not isinstance(value, str) or not TOOL_PREFIX_RE.fullmatch(value):
        raise ValueError("must be 1-64 letters, digits, '_' or '-' (the tools become NAME_invoke_tool ...)")
    return value


DEFAULT_KEYS: dict[str, Callable[[Any], Any]] = {
    **POLICY_KEYS,  # budget, shrink, dedup, ...: a session-wide default for every per-tool knob
    "recovery": _recovery,
    "recovery_dir": _path,
    "retention": lambda v: _duration(v, allow_off=True),
    "cache_ttl": lambda v: _duration(v, allow_off=False),
    "cache_entries": _positive_int,
    "cache_bytes": _size,
    "jobs": _positive_int,
    "timeout": _timeout,
    "stats_file": _path,
    "recovery_url": _recovery_url,
    "tenant": _tenant,
    "compress_tools": _compress_tools,
    "tool_prefix": _tool_prefix,
}


@dataclass(frozen=True)
class Config:
    """One parsed config file. `defaults` is keyed by `Settings` field names, values already converted."""

    path: Path | None = None
    defaults: Mapping[str, Any] = field(default_factory=dict)
    policies: PolicySet = field(default_factory=PolicySet)
    servers: Mapping[str, Any] | None = None  # the `mcpServers` table, as in servers.json
    lines: Mapping[str, int] = field(default_factory=dict)  # "defaults.budget" -> line number
    servers_json: bool = False  # the older servers JSON: servers only, no settings

    def where(self, key: str) -> str:
        """`path:line` of a `[defaults]` key (for `mcpsqueeze config`)."""
        line = self.lines.get(f"defaults.{key}")
        return f"{self.path}:{line}" if line else str(self.path)

    def apply(self, settings: Settings, keep: frozenset[str] = frozenset()) -> Settings:
        """`settings` with this file's defaults and policies; fields in `keep` (given as flags) stay."""
        changes = {k: v for k, v in self.defaults.items() if k not in keep}
        return dataclasses.replace(settings, **changes, policies=self.policies)

    def policy_for(self, server: str, tool: str, base: Policy | None = None) -> Policy:
        """The effective policy of one tool: `base` (default: this file's defaults) refined by the rules."""
        if base is None:
            names = {f.name for f in dataclasses.fields(Policy)}
            base = Policy(**{k: v for k, v in self.defaults.items() if k in names})
        return self.policies.resolve(base, server, tool)


def load_config(path: Path | str) -> Config:
    """Read and check one config file (TOML, or the older servers JSON)."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"config file {path} does not exist") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read config file {path}: {exc}") from exc
    return parse_config_text(text, path)


def parse_config_text(text: str, path: Path | None = None) -> Config:
    source = str(path) if path is not None else "config"
    if is_servers_json(text):
        import json

        try:
            document = json.loads(text)
        except ValueError as exc:
            raise ConfigError(f"{source} is not valid JSON: {exc}") from exc
        servers = document.get("mcpServers") if isinstance(document, dict) else None
        return Config(path=path, servers=servers if isinstance(servers, dict) else {}, servers_json=True)
    import tomllib  # (lazily: only a config file needs it, and its regexes cost ~6 ms of start-up)

    try:
        document = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{source} is not valid TOML: {exc}") from exc
    lines = _key_lines(text)

    def fail(keys: tuple[str, ...], message: str) -> ConfigError:
        line = lines.get(keys) or lines.get(keys[:-1])
        return ConfigError(f"{source}:{line}: {message}" if line else f"{source}: {message}")

    _known(document, _TOP_KEYS, (), fail)
    raw_defaults = _table(document, "defaults", fail)
    _known(raw_defaults, tuple(DEFAULT_KEYS), ("defaults",), fail)
    defaults = {k: _checked(DEFAULT_KEYS[k], v, ("defaults", k), fail) for k, v in raw_defaults.items()}
    rules = []
    for pattern, table in _table(document, "policies", fail).items():
        where = ("policies", pattern)
        if not isinstance(table, dict):
            raise fail(where, f'policies."{pattern}" must be a table of keys ({", ".join(POLICY_KEYS)})')
        if not pattern.strip():
            raise fail(where, 'a policy needs a non-empty glob such as "github:search_*"')
        _known(table, tuple(POLICY_KEYS), where, fail)
        values = {k: _checked(POLICY_KEYS[k], v, (*where, k), fail) for k, v in table.items()}
        line = lines.get(where)
        rules.append(PolicyRule(pattern, values, f"{source}:{line}" if line else source))
    servers = document.get("mcpServers")
    if servers is not None and not isinstance(servers, dict):
        raise fail(("mcpServers",), "mcpServers must be a table of servers: [mcpServers.NAME]")
    flat = {".".join(k): v for k, v in lines.items()}
    return Config(path, defaults, PolicySet(tuple(rules)), servers, flat)


def _toml_key(name: str) -> str:
    return name if re.fullmatch(r"[A-Za-z0-9_-]+", name) else '"' + name.replace('"', '\\"') + '"'


Fail = Callable[[tuple[str, ...], str], ConfigError]


def _table(document: dict[str, Any], key: str, fail: Fail) -> dict[str, Any]:
    value = document.get(key, {})
    if not isinstance(value, dict):
        raise fail((key,), f"{key} must be a table: [{key}]")
    return value


def _known(table: dict[str, Any], allowed: tuple[str, ...], where: tuple[str, ...], fail: Fail) -> None:
    for key in table:
        if key not in allowed:
            import difflib  # (only a config file with a mistake needs it)

            close = difflib.get_close_matches(key, allowed, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else f"; known keys: {', '.join(allowed)}"
            place = f" in [{'.'.join(map(_toml_key, where))}]" if where else " at the top level"
            raise fail((*where, key), f"unknown key {key!r}{place}{hint}")


def _checked(check: Callable[[Any], Any], value: Any, keys: tuple[str, ...], fail: Fail) -> Any:
    try:
        return check(value)
    except ValueError as exc:
        raise fail(keys, f"{keys[-1]} = {value!r}: {exc}") from None


_HEADER_RE = re.compile(r"^\s*\[(?!\[)(.+?)\]\s*(?:#.*)?$")
_KEY_RE = re.compile(r"""^\s*([A-Za-z0-9_-]+|"[^"]*"|'[^']*')\s*=""")


def _key_lines(text: str) -> dict[tuple[str, ...], int]:
    """Line numbers of table headers and keys (tomllib reports none); best effort, for messages only."""
    found: dict[tuple[str, ...], int] = {}
    table: tuple[str, ...] = ()
    for number, line in enumerate(text.splitlines(), start=1):
        header = _HEADER_RE.match(line)
        if header:
            import tomllib

            try:
                parsed: Any = tomllib.loads(f"[{header.group(1)}]\n")
            except tomllib.TOMLDecodeError:
                continue
            path: list[str] = []
            while isinstance(parsed, dict) and len(parsed) == 1:
                name = next(iter(parsed))
                path.append(name)
                parsed = parsed[name]
            table = tuple(path)
            found.setdefault(table, number)
            continue
        key = _KEY_RE.match(line)
        if key:
            name = key.group(1)
            if name[0] in "\"'":
                name = name[1:-1]
            found.setdefault((*table, name), number)
    return found
