"""`mcpsqueeze auth login|clear`: the one interactive step of OAuth for URL backends (see oauth.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from .._errors import UsageError
from .._net import is_url
from ..settings import oauth_over, parse_config, parse_servers, read_servers_file
from ._config import read_config
from ._options import SECONDS, checked_oauth, file_option, knob_options, knob_values, reported

__all__ = ["auth"]


def _resolve(target: str, servers_file: Path | None, config: Path | None) -> tuple[str, dict[str, str], Any]:
    """A URL as given, or the url (headers, OAuth client) of the servers-config entry of that name."""
    if is_url(target):
        return target, {}, None
    if servers_file is not None:
        specs = parse_config(read_servers_file(servers_file), str(servers_file))
    else:
        choice = read_config(config)
        found = choice.servers_json or choice.settings  # a servers JSON given as --config, else its tables
        specs = parse_servers(found.servers or {}, str(found.path))
    for spec in specs:
        if spec.name == target:
            if spec.url is None:
                raise UsageError(f"server {target!r} runs a command, not a URL: OAuth is for URL backends")
            return spec.url, dict(spec.headers), spec.oauth
    names = ", ".join(sorted(s.name for s in specs)) or "none"
    raise UsageError(f"no server named {target!r} in the servers config (servers: {names}); or give its URL")


_SERVERS = file_option(
    "--servers", "servers_file", help="Servers JSON to look NAME up in (default: the config file's servers)."
)
_CONFIG = file_option("--config", help="Settings or servers file.")


@click.group()
def auth() -> None:
    """OAuth logins for URL backends (tokens in a 0600 file under the user config directory)."""


@auth.command()
@click.argument("target")
@click.option(
    "--port", type=int, default=0, show_default=True, help="Loopback port for the redirect (0: any)."
)
@click.option(
    "--timeout", type=SECONDS, default=300.0, show_default=True, help="Seconds to wait for the browser."
)
@click.option(
    "--fetch-authorize-url",
    "fetch",
    is_flag=True,
    help="Headless (CI, tests): GET the authorization URL with an HTTP client instead of a browser; "
    "works only with an authorization server that approves without a person.",
)
@_SERVERS
@_CONFIG
@knob_options("auth")
def login(
    target: str,
    port: int,
    timeout: float,
    fetch: bool,
    servers_file: Path | None,
    config: Path | None,
    **opts: Any,
) -> None:
    """Authorize mcpsqueeze for a backend: `auth login URL` or `auth login NAME` (from the servers config).

    Prints the authorization URL to open in a browser and accepts the redirect on 127.0.0.1.
    """
    import anyio

    from ..transports import login as run_login

    with reported("mcpsqueeze auth", OSError):  # (no redirect in time: a BackendError saying so)
        url, headers, entry = _resolve(target, servers_file, config)
        values = knob_values(opts, "auth")
        headers = {**headers, **values.get("headers", {})}
        flags = any(key.startswith("oauth_") for key in values)  # (else the entry's client, as it is)
        client = checked_oauth(lambda: oauth_over(entry, values)) if flags else entry
        path: Any = anyio.run(
            lambda: run_login(url, port=port, timeout=timeout, headers=headers, fetch=fetch, client=client)
        )
    click.echo(f"mcpsqueeze: logged in to {url}; tokens saved in {path}", err=True)


@auth.command()
@click.argument("target", required=False)
@_SERVERS
@_CONFIG
def clear(target: str | None, servers_file: Path | None, config: Path | None) -> None:
    """Forget the stored tokens of one backend (URL or NAME), or of all backends."""
    from ..transports import clear_tokens

    with reported("mcpsqueeze auth", OSError):
        url = _resolve(target, servers_file, config)[0] if target else None
    removed = clear_tokens(url)
    click.echo(f"mcpsqueeze: removed {len(removed)} stored login(s)", err=True)
