"""The config file: the defaults and per-tool policies a user would otherwise repeat in every client config.
TOML, found at `--config FILE`, else `MCPSQUEEZE_CONFIG`, else `<user config dir>/config.toml` when it
exists: `[defaults]` (any of DEFAULT_KEYS; flags and variables override them), `[policies."server:tool"]`
(an fnmatch glob; no ':' is the tool on any server) and, for `serve` and the Python Client,
`[mcpServers.NAME]` tables. A file starting with `{` is the older servers JSON (servers only). Pure apart
from reading the one file.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .._errors import UsageError
from .._paths import default_config_path
from .._trusted import read_trusted
from ._depth import MAX_CONFIG_DEPTH, too_deep
from ._policy import Policy, PolicyRule, PolicySet
from ._settings import Settings
from ._table import KNOBS, POLICY_KNOBS

__all__ = [
    "DEFAULT_KEYS",
    "MAX_CONFIG_DEPTH",
    "POLICY_KEYS",
    "Config",
    "ConfigError",
    "default_config_path",
    "find_config",
    "load_config",
    "parse_config_text",
    "read_servers_file",
]

CONFIG_ENV = "MCPSQUEEZE_CONFIG"
_TOP_KEYS = ("defaults", "policies", "mcpServers")


class ConfigError(UsageError):
    """The config file cannot be used; the message names the file and, when known, the line."""


def find_config(flag: Path | None) -> tuple[Path | None, str]:
    """The config file to read and how it was chosen: `--config`, the variable, or the default place (used
    only when a file is there; a named file must exist)."""
    if flag is not None:
        return flag, "--config"
    if os.environ.get(CONFIG_ENV):
        return Path(os.environ[CONFIG_ENV]), CONFIG_ENV
    path = default_config_path()
    return (path, "default") if path.is_file() else (None, "none")


def is_servers_json(text: str) -> bool:
    """The older `{"mcpServers": ...}` JSON (a TOML document cannot start with `{`)."""
    return text.lstrip().startswith("{")


# key -> checker (returns the value to use, raises ValueError with a short reason): `[defaults]` takes every
# row of the table that is a config key; `[policies]` the Policy rows (budget, shrink, ...)
DEFAULT_KEYS: dict[str, Callable[[Any], Any]] = {row.name: row.kind.check for row in KNOBS if row.config}
POLICY_KEYS: dict[str, Callable[[Any], Any]] = {row.name: row.kind.check for row in POLICY_KNOBS}


@dataclass(frozen=True)
class Config:
    """One parsed config file. `defaults` is keyed by `Settings` field names, values already converted."""

    path: Path | None = None
    defaults: Mapping[str, Any] = field(default_factory=dict)
    policies: PolicySet = field(default_factory=PolicySet)
    servers: Mapping[str, Any] | None = None  # the `mcpServers` table, as in servers.json
    lines: Mapping[tuple[str, ...], int] = field(default_factory=dict)  # ("defaults", "budget") -> line
    servers_json: bool = False  # the older servers JSON: servers only, no settings

    def where(self, key: str) -> str:
        """`path:line` of a `[defaults]` key (for `mcpsqueeze config`)."""
        line = self.lines.get(("defaults", key))
        return f"{self.path}:{line}" if line else str(self.path)

    def apply(self, settings: Settings, keep: frozenset[str] = frozenset()) -> Settings:
        """`settings` with this file's defaults and policies; fields in `keep` (given as flags) stay."""
        changes = {k: v for k, v in self.defaults.items() if k not in keep}
        return dataclasses.replace(settings.replaced(**changes), policies=self.policies)

    def policy_for(self, server: str, tool: str, base: Policy | None = None) -> Policy:
        """The effective policy of one tool: `base` (default: this file's defaults) refined by the rules."""
        if base is None:
            base = Policy(**{k: v for k, v in self.defaults.items() if k in POLICY_KEYS})
        return self.policies.resolve(base, server, tool)


def load_config(path: Path | str) -> Config:
    """Read and check one config file (TOML, or the older servers JSON)."""
    path = Path(path)
    try:
        text = read_config_text(path, "config file")
    except FileNotFoundError:
        raise ConfigError(f"config file {path} does not exist") from None
    except UsageError as exc:
        raise ConfigError(str(exc)) from None
    return parse_config_text(text, path)


def read_config_text(path: Path, what: str = "servers config") -> str:
    """A config or servers JSON file's text, refused (UsageError) when another user could have written
    it: `serve` runs the commands it names. FileNotFoundError passes through."""
    try:
        return read_trusted(path, what).decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UsageError(f"cannot read the {what} {path}: it is not UTF-8 ({exc.reason})") from None


def read_servers_file(path: Path) -> str:
    """A servers JSON named on the command line (`--servers`), checked as `read_config_text` checks."""
    try:
        return read_config_text(path)
    except FileNotFoundError:
        raise UsageError(f"the servers config {path} does not exist") from None


def parse_config_text(text: str, path: Path | None = None) -> Config:
    source = str(path) if path is not None else "config"
    if too_deep(text, toml=not is_servers_json(text)):
        raise ConfigError(f"{source} nests tables or arrays deeper than {MAX_CONFIG_DEPTH} levels")
    if is_servers_json(text):
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
    return Config(path, defaults, PolicySet(tuple(rules)), servers, lines)


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
    # TOML ends lines at "\n" only: `splitlines` also splits at U+2028, U+0085, ... inside values
    for number, line in enumerate(text.split("\n"), start=1):
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
