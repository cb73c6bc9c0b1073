"""The CLI's side of the config file: which file, and `mcpsqueeze config`. Per setting: a flag, then its
variable, then the file's `[defaults]`, then the built-in default; `[policies]` refine them per tool.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import click
from click.core import ParameterSource

from .._clients import PROFILE_NAMES, choose
from ..settings import (
    KNOBS,
    Config,
    ConfigError,
    Settings,
    default_config_path,
    find_config,
    knob_named,
    load_config,
)
from ._options import given_by

__all__ = ["apply_config", "read_config", "render_effective"]


@dataclasses.dataclass(frozen=True)
class ConfigChoice:
    """The settings file in use, how it was found, and a servers JSON given through `--config`."""

    settings: Config
    how: str  # --config | MCPSQUEEZE_CONFIG | default | none
    servers_json: Config | None = None
    servers_how: str = ""  # how the servers JSON was named: --config or MCPSQUEEZE_CONFIG


def read_config(flag: Path | None) -> ConfigChoice:
    """Load the config named by `--config`, `MCPSQUEEZE_CONFIG` or the default place; a servers JSON there
    supplies servers only (settings then come from the default TOML file when there is one)."""
    try:
        path, how = find_config(flag)
        if path is None:
            return ConfigChoice(Config(), how)
        config = load_config(path)
        if not config.servers_json:
            return ConfigChoice(config, how)
        default = default_config_path()
        if default.is_file() and default != path:
            return ConfigChoice(load_config(default), "default", config, how)
        return ConfigChoice(Config(), "none", config, how)
    except ConfigError as exc:
        raise click.UsageError(str(exc)) from exc


def _given(ctx: click.Context, field: str) -> str | None:
    """How the command line set `field` ("flag --budget", "env MCPSQUEEZE_BUDGET"); None when it did not."""
    params = {param.name: param for param in ctx.command.params}
    for name in given_by(knob_named(field)):
        source = ctx.get_parameter_source(name)
        if source == ParameterSource.COMMANDLINE:
            return f"flag {max(params[name].opts, key=len)}"
        if source == ParameterSource.ENVIRONMENT:
            return f"env {getattr(params[name], 'envvar', None) or '?'}"
    return None


def apply_config(settings: Settings, config: Config, ctx: click.Context) -> Settings:
    keep = frozenset(f for f in config.defaults if _given(ctx, f) is not None)
    return config.apply(settings, keep)


def _source(ctx: click.Context, config: Config, field: str) -> str:
    return _given(ctx, field) or (config.where(field) if field in config.defaults else "default")


def _show(field: str, value: Any) -> str:
    if field == "recovery_url" and isinstance(value, str):
        from ..recovery import safe_url

        return safe_url(value)  # a password in the URL is never printed
    return knob_named(field).kind.show(value)


def _values(values: Any) -> str:
    return ", ".join(f"{k} = {_show(k, v)}" for k, v in values.items())


def _value(settings: Settings, name: str) -> Any:
    return getattr(settings.policy, name) if hasattr(settings.policy, name) else getattr(settings, name)


def render_effective(
    settings: Settings, choice: ConfigChoice, ctx: click.Context, tools: tuple[str, ...]
) -> str:
    """`mcpsqueeze config`: each effective setting and its source, the policies, per-tool results."""
    config = choice.settings
    if config.path is not None:
        lines = [f"config file: {config.path} ({choice.how})"]
    else:
        lines = [f"config file: none ({default_config_path()} does not exist)"]
    if choice.servers_json is not None:
        lines.append(f"servers file: {choice.servers_json.path} (servers JSON, from {choice.servers_how})")
    rows = [
        (row.name, _show(row.name, _value(settings, row.name)), _source(ctx, config, row.name))
        for row in KNOBS
        if "config" in row.doors  # every setting this command takes, set or at its default
    ]
    width = max(len(f) for f, _, _ in rows)
    lines += [f"  {f:<{width}} = {v}  ({s})" for f, v, s in rows]
    if settings.client == "auto":  # which client profile applies, and why (docs/clients.md)
        lines.append(
            "client profile: chosen at initialize from the clientInfo.name the client sends "
            f"({', '.join(PROFILE_NAMES)}); any other client gets none"
        )
    else:
        lines.append(choose(settings.client, None).describe())
    rules = settings.policies.rules
    if rules:
        lines.append("policies (in file order; every matching rule applies, a later one wins key by key):")
        pwidth = max(len(r.pattern) for r in rules)
        lines += [f"  {r.pattern:<{pwidth}}  {_values(r.values)}  ({r.source})" for r in rules]
    else:
        lines.append("policies: none")
    servers = (choice.servers_json or config).servers
    if servers:
        lines.append(f"servers: {', '.join(servers)}")
    base = settings.policy
    for tool in tools:
        server, _, name = tool.rpartition(":")
        policy = settings.policies.resolve(base, server, name)
        lines.append(f"{tool}: {_values(dataclasses.asdict(policy))}")
    return "\n".join(lines) + "\n"
