"""`mcpsqueeze auth login|clear`: the one interactive step of OAuth for URL backends (see oauth.py)."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from .._errors import EXIT_UNREACHABLE, EXIT_USAGE, BackendError, MCPSqueezeError, UsageError, exit_code
from .._net import is_url
from ._options import SECONDS, file_option

__all__ = ["auth", "oauth_client", "oauth_options"]

F = TypeVar("F", bound=Callable[..., Any])


def oauth_options(func: F) -> F:
    """The OAuth client flags of a URL backend (wrap, serve -- URL, auth login); config keys oauth_*;
    each also read from its variable, MCPSQUEEZE_OAUTH_* (clients that swallow options pass those on)."""
    func = click.option(
        "--oauth-login",
        envvar="MCPSQUEEZE_OAUTH_LOGIN",
        type=click.Choice(["never", "prompt", "fetch"]),
        default=None,
        help="URL backend: when it wants a new OAuth authorization mid-session (none stored, expired "
        "beyond refresh, a wider scope): never = fail naming `mcpsqueeze auth login` [default]; prompt = "
        "print the authorization URL on stderr and accept the browser's redirect on 127.0.0.1; fetch = "
        "GET it headlessly (test authorization servers that approve without a person). "
        "[env: MCPSQUEEZE_OAUTH_LOGIN]",
    )(func)
    func = click.option(
        "--oauth-client-metadata-url",
        envvar="MCPSQUEEZE_OAUTH_CLIENT_METADATA_URL",
        default=None,
        metavar="HTTPS-URL",
        help="URL backend: identify as this client ID metadata document (CIMD) where the authorization "
        "server supports it, instead of registering dynamically. [env: MCPSQUEEZE_OAUTH_CLIENT_METADATA_URL]",
    )(func)
    func = click.option(
        "--oauth-auth-method",
        envvar="MCPSQUEEZE_OAUTH_AUTH_METHOD",
        type=click.Choice(["basic", "post"]),
        default=None,
        help="URL backend: how the pre-registered client sends its secret to the token endpoint, as it "
        "was registered: basic (client_secret_basic) or post (client_secret_post) [default: what the "
        "stored registration says, else basic]. [env: MCPSQUEEZE_OAUTH_AUTH_METHOD]",
    )(func)
    func = file_option(
        "--oauth-client-secret-file",
        envvar="MCPSQUEEZE_OAUTH_CLIENT_SECRET_FILE",
        help="URL backend: the pre-registered client's secret, in a file only you can read. "
        "[env: MCPSQUEEZE_OAUTH_CLIENT_SECRET_FILE]",
    )(func)
    return click.option(
        "--oauth-client-id",
        envvar="MCPSQUEEZE_OAUTH_CLIENT_ID",
        default=None,
        help="URL backend: a client pre-registered with its authorization server (no dynamic "
        "registration). [env: MCPSQUEEZE_OAUTH_CLIENT_ID]",
    )(func)


def oauth_client(opts: dict[str, Any], base: Any = None) -> Any:
    """An `OAuthClient` from the flags over `base` (a config entry's), or None when neither gives one."""
    keys = (
        "oauth_client_id",
        "oauth_client_secret_file",
        "oauth_client_metadata_url",
        "oauth_login",
        "oauth_auth_method",
    )
    given = {k: opts[k] for k in keys if opts.get(k) is not None}
    if not given:
        return base
    from ..settings import OAuthClient

    fields = {k.removeprefix("oauth_"): v for k, v in given.items()}
    try:
        if base is not None:
            import dataclasses

            client = dataclasses.replace(base, **fields)
        else:
            client = OAuthClient(**fields)
        client.client_secret()  # an unreadable or unsafe secret file is a usage error now, not mid-login
        return client
    except UsageError as exc:
        raise click.BadParameter(str(exc), param_hint="--oauth-*") from exc


def _resolve(target: str, servers_file: Path | None, config: Path | None) -> tuple[str, dict[str, str], Any]:
    """A URL as given, or the url (headers, OAuth client) of the servers-config entry of that name."""
    if is_url(target):
        return target, {}, None
    from ..settings import parse_config, parse_servers, read_servers_file
    from ._config import read_config

    if servers_file is not None:
        specs = parse_config(read_servers_file(servers_file), str(servers_file))
    else:
        choice = read_config(config)
        if choice.servers_json is not None:
            specs = parse_servers(choice.servers_json.servers, str(choice.servers_json.path))
        else:
            specs = parse_servers(choice.settings.servers or {}, str(choice.settings.path))
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
@oauth_options
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

    try:
        url, headers, entry = _resolve(target, servers_file, config)
        client = oauth_client(opts, entry)
        path: Any = anyio.run(
            lambda: run_login(url, port=port, timeout=timeout, headers=headers, fetch=fetch, client=client)
        )
    except (UsageError, OSError) as exc:
        click.echo(f"mcpsqueeze auth: {exc}", err=True)
        sys.exit(EXIT_USAGE)
    except (BackendError, TimeoutError) as exc:
        click.echo(f"mcpsqueeze auth: {exc or 'no redirect arrived in time'}", err=True)
        sys.exit(exit_code(exc) if isinstance(exc, BackendError) else EXIT_UNREACHABLE)
    except MCPSqueezeError as exc:
        click.echo(f"mcpsqueeze auth: {exc}", err=True)
        sys.exit(exit_code(exc))
    click.echo(f"mcpsqueeze: logged in to {url}; tokens saved in {path}", err=True)


@auth.command()
@click.argument("target", required=False)
@_SERVERS
@_CONFIG
def clear(target: str | None, servers_file: Path | None, config: Path | None) -> None:
    """Forget the stored tokens of one backend (URL or NAME), or of all backends."""
    from ..transports import clear_tokens

    try:
        url = _resolve(target, servers_file, config)[0] if target else None
    except (UsageError, OSError) as exc:
        click.echo(f"mcpsqueeze auth: {exc}", err=True)
        sys.exit(EXIT_USAGE)
    removed = clear_tokens(url)
    click.echo(f"mcpsqueeze: removed {len(removed)} stored login(s)", err=True)
