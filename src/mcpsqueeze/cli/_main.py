"""The `mcpsqueeze` command line: parse into Settings, call the runner, map errors to exit codes.

Exit codes (all CLIs): 0 ok, 1 the tool reported an error, 2 usage error or refused input,
3 session or backend unreachable, 4 backend failure or timeout (one table: `_errors.exit_code`).
"""

from __future__ import annotations

import math
import sys
from pathlib import Path
from typing import Any

import click

from .._errors import (
    EXIT_BACKEND,
    EXIT_TOOL_ERROR,
    EXIT_UNREACHABLE,
    EXIT_USAGE,
    BackendError,
    MCPSqueezeError,
    UsageError,
    exit_code,
)
from ..settings import (
    DEFAULT_BUDGET,
    DEFAULT_SHRINK_ABOVE,
    MIN_BUDGET,
    MIN_TRUNCATE_CHARS,
    Settings,
    default_recovery_dir,
)
from ._auth import oauth_client, oauth_options

__all__ = ["main"]


def _parse_headers(values: tuple[str, ...]) -> dict[str, str]:
    headers: dict[str, str] = {}
    for value in values:
        key, sep, val = value.partition("=")
        if not sep or not key.strip():
            raise click.BadParameter(f"{value!r} is not KEY=VALUE", param_hint="-H/--header")
        headers[key.strip()] = val
    return headers


def _keep(value: str, flag: str) -> float | None:
    """Every lifetime flag through one parser: 'off'/'never' keep forever, 0 is refused as ambiguous."""
    from ..recovery import parse_keep

    try:
        return parse_keep(value, flag)
    except UsageError as exc:
        raise click.BadParameter(str(exc), param_hint=flag) from exc


def _size(value: str) -> int:
    from ..recovery import parse_size

    try:
        return parse_size(value)
    except UsageError as exc:
        raise click.BadParameter(str(exc)) from exc


def _ours(exc: BaseException) -> MCPSqueezeError | None:
    """Our error inside (possibly nested) task-group exception groups."""
    if isinstance(exc, MCPSqueezeError):
        return exc
    if isinstance(exc, BaseExceptionGroup):
        for inner in exc.exceptions:
            found = _ours(inner)
            if found is not None:
                return found
    return None


def _run(coro_fn: Any, *args: Any) -> int:
    import anyio

    try:
        code: int = anyio.run(coro_fn, *args)
        return code
    except KeyboardInterrupt:
        return 130
    except BaseException as exc:
        ours = _ours(exc)
        if ours is None:
            raise
        click.echo(f"mcpsqueeze: {ours}", err=True)
        return exit_code(ours)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="mcpsqueeze")
def main() -> None:
    """A transparent MCP proxy that shrinks, deduplicates and counts tool results.

    Every shrunk or deduplicated result stays recoverable, byte for byte.
    """
    _configure_logging("warning")  # every command shows the library's warnings; wrap/serve set --log-level


def _shrink_options(func: Any) -> Any:
    options = [
        click.option(
            "--budget",
            type=int,
            default=None,
            metavar="N",
            help=f"Character budget for each tool result's text, notice included (default {DEFAULT_BUDGET}).",
        ),
        click.option(
            "--shrinkfit",
            type=int,
            is_flag=False,
            flag_value=DEFAULT_BUDGET,
            default=None,
            metavar="[N]",
            help="Alias of --budget (mcp-compressor compatible).",
        ),
        click.option(
            "--truncate-chars",
            type=int,
            default=None,
            metavar="N",
            help="Also cap each text block at N characters, marker included (MCP Squeeze compatible; "
            f"at least {MIN_TRUNCATE_CHARS}). With --budget, the stricter applies to each block.",
        ),
        click.option(
            "--shrink-above",
            envvar="MCPSQUEEZE_SHRINK_ABOVE",
            default=None,
            metavar="N|off",
            help=f"Results over N characters get a preview sized by value (landmarks, field names, counts; "
            f"at most the budget) even when they fit the budget (default {DEFAULT_SHRINK_ABOVE}); "
            "'off': only results over the budget shrink.",
        ),
        click.option(
            "--toonify",
            is_flag=True,
            help="Show JSON results that are not shrunk as TOON (mcp-compressor compatible); the original "
            "JSON stays recoverable byte for byte.",
        ),
        click.option(
            "--drop-duplicate-structured",
            is_flag=True,
            help="For clients that show structuredContent to the model: drop it when it repeats the text, "
            "and hide those tools' outputSchema. The original stays recoverable. Off: never modified.",
        ),
        click.option("--no-shrink", is_flag=True, help="Never shrink results."),
        click.option("--no-dedup", is_flag=True, help="Never replace repeated results with a pointer."),
        click.option(
            "--recovery",
            type=click.Choice(["memory", "files", "both"]),
            default="both",
            show_default=True,
            help="Where originals of shrunk results are kept.",
        ),
        click.option(
            "--recovery-dir",
            type=click.Path(path_type=Path, file_okay=False),
            envvar="MCPSQUEEZE_RECOVERY_DIR",
            default=None,
            help=f"Private directory for original files [default: {default_recovery_dir()}].",
        ),
        click.option(
            "--cache-ttl", default="300s", show_default=True, help="Memory cache entry lifetime; 'off' keeps."
        ),
        click.option(
            "--cache-entries", type=int, default=32, show_default=True, help="Memory cache entries."
        ),
        click.option("--cache-bytes", default="32M", show_default=True, help="Memory cache size."),
        click.option(
            "--recovery-url",
            envvar="MCPSQUEEZE_RECOVERY_URL",
            default=None,
            metavar="redis://HOST:PORT/DB",
            help="Also keep originals in this Redis, shared by replicas (needs mcpsqueeze[redis]; "
            "see docs/scale-out.md).",
        ),
        click.option(
            "--tenant",
            envvar="MCPSQUEEZE_TENANT",
            default=None,
            help="Whose originals these are when the bearer token names no tenant.",
        ),
        click.option(
            "--retention",
            default="24h",
            show_default=True,
            help="Delete original files older than this (at start, then hourly); 'off' disables.",
        ),
        click.option("--jobs", type=int, default=4, show_default=True, help="Worker threads for condensing."),
        click.option(
            "--stats-file",
            type=click.Path(path_type=Path, dir_okay=False),
            envvar="MCPSQUEEZE_STATS_FILE",
            default=None,
            help="Append one JSON line per call to this file.",
        ),
    ]
    for option in reversed(options):
        func = option(func)
    return func


_CONFIG_HELP = (
    'Settings file (TOML: [defaults], [policies."server:tool"]) [default: MCPSQUEEZE_CONFIG or '
    "<user config dir>/config.toml]; see docs/config.md."
)


def _config_option(func: Any) -> Any:
    return click.option(
        "--config",
        "config",
        type=click.Path(path_type=Path, dir_okay=False),
        default=None,
        help=_CONFIG_HELP,
    )(func)


def _shrink_above(value: str | None) -> int | None:
    if value is None:
        return DEFAULT_SHRINK_ABOVE
    if value.strip().lower() in ("off", "false", "none"):
        return None
    try:
        chars = int(value)
    except ValueError:
        raise click.BadParameter(
            f"a number of characters or 'off', got {value!r}", param_hint="--shrink-above"
        ) from None
    if chars < 0:
        raise click.BadParameter(
            f"a number of characters or 'off', got {value!r}", param_hint="--shrink-above"
        )
    return chars


def _truncate_chars(value: int | None, shrink: bool) -> int | None:
    if value is None:
        return None
    if not shrink:
        raise click.BadParameter("--truncate-chars shrinks results; it cannot go with --no-shrink")
    if value < MIN_TRUNCATE_CHARS:
        raise click.BadParameter(
            f"each text block needs at least {MIN_TRUNCATE_CHARS} characters for a preview and its "
            f"recovery marker, got {value}",
            param_hint="--truncate-chars",
        )
    return value


def _output_options(func: Any) -> Any:
    """What the proxy says on stderr: the exit summary (`--quiet`) and the log level of per-call lines."""
    func = click.option(
        "--log-level",
        type=click.Choice(["debug", "info", "warning", "error"], case_sensitive=False),
        envvar="MCPSQUEEZE_LOG_LEVEL",
        default="warning",
        show_default=True,
        help="'info': one stderr line per shrunk or deduplicated call (tool, chars, tokens, response id).",
    )(func)
    return click.option("-q", "--quiet", is_flag=True, help="No session summary on exit.")(func)


def _configure_logging(level: str) -> None:
    """Our loggers at `level`; libraries (the SDK logs every request at INFO) stay at WARNING."""
    from .._logging import configure_logging

    configure_logging(level)


def _budget(budget: int | None, shrinkfit: int | None) -> int:
    value = budget if budget is not None else shrinkfit if shrinkfit is not None else DEFAULT_BUDGET
    if value < MIN_BUDGET:
        raise click.BadParameter(f"the budget must be at least {MIN_BUDGET} characters, got {value}")
    return value


# The server command starts at wrap's first positional argument and everything after it is the server's
# (its own flags too), with or without `--`: some clients (the MCP Inspector CLI) drop the separator.
@main.command(context_settings={"allow_interspersed_args": False})
@click.option(
    "-H", "--header", "headers", multiple=True, metavar="KEY=VALUE", help="HTTP header for a URL backend."
)
@click.option("--timeout", type=float, default=None, help="Seconds before a backend request is abandoned.")
@click.option(
    "--transport",
    type=click.Choice(["stdio", "streamable-http"]),
    default="stdio",
    show_default=True,
    help="How the agent talks to the proxy.",
)
@click.option("--host", default="127.0.0.1", show_default=True, help="Bind address for streamable-http.")
@click.option("--port", type=int, default=8765, show_default=True, help="Port for streamable-http (0: any).")
@click.option("--name", "server_name", default="backend", show_default=True, help="Backend name in stats.")
@click.option(
    "--token-file",
    type=click.Path(path_type=Path, dir_okay=False),
    default=None,
    help="streamable-http: require `Authorization: Bearer <token>` from this 0600 file (created if missing).",
)
@click.option(
    "--max-body",
    default="16M",
    show_default=True,
    metavar="SIZE",
    help="streamable-http: largest request body (K/M/G suffixes); a larger one gets 413 and is never read.",
)
@click.option(
    "--max-sessions",
    type=click.IntRange(min=1),
    default=16,
    show_default=True,
    help="streamable-http: sessions at once (each runs its own backend); more are refused with 503.",
)
@oauth_options
@_config_option
@_shrink_options
@_output_options
@click.argument("target", nargs=-1, required=True, type=click.UNPROCESSED)
def wrap(target: tuple[str, ...], **opts: Any) -> None:
    """Proxy one MCP server: `wrap [OPTIONS] [--] COMMAND [ARGS...]` or `wrap [OPTIONS] [--] URL`.

    Everything from COMMAND on belongs to the server, its own options included.
    """
    if opts["transport"] == "stdio" and not (
        len(target) == 1 and target[0].startswith(("http://", "https://"))
    ):
        from ..transports import prestart

        prestart(target)  # the backend boots while the settings are checked and the relay is imported
    try:
        from ._config import read_config

        choice = read_config(opts["config"])
        if choice.servers_json is not None and opts["config"] is not None:
            raise click.UsageError(
                f"{opts['config']} is a servers JSON (for serve); wrap takes its backend after '--' and a "
                "TOML settings file as --config (see docs/config.md)"
            )
        settings = _settings(list(target), opts, choice)
        _configure_logging(opts["log_level"])
        _early_initialize(settings)
        from ..proxy import run_wrap

        code = _run(run_wrap, settings)
    finally:
        from ..transports import discard

        discard()  # a backend started early but never adopted (bad settings, failed start) is stopped
    sys.exit(code)


# What the stdio relay imports; loaded while `_handshake` relays the first `initialize`.
_RELAY_MODULES = ("mcpsqueeze.transports._channels", "mcpsqueeze.proxy._wrap", "anyio._backends._asyncio")


def _early_initialize(settings: Settings) -> None:
    """A backend started early answers the agent's first `initialize` while the relay is imported."""
    if settings.transport != "stdio" or settings.is_url:
        return
    from ..transports import started

    backend = started(settings.target)
    if backend is not None:
        from ..proxy import handshake

        handshake(backend, _RELAY_MODULES)


def _settings(target: list[str], opts: dict[str, Any], choice: Any = None) -> Settings:
    """Settings from the flags, with the config file's defaults and policies under them."""
    from ._config import apply_config, read_config

    if choice is None:
        choice = read_config(opts.get("config"))
    return apply_config(_flag_settings(target, opts), choice.settings, click.get_current_context())


def _flag_settings(target: list[str], opts: dict[str, Any]) -> Settings:
    if opts["timeout"] is not None and opts["timeout"] <= 0:
        raise click.BadParameter("--timeout must be positive")
    if opts["jobs"] < 1:
        raise click.BadParameter("--jobs must be at least 1")
    ttl = _keep(opts["cache_ttl"], "--cache-ttl")
    oauth = oauth_client(opts)
    if oauth is not None and not (len(target) == 1 and target[0].startswith(("http://", "https://"))):
        raise click.BadParameter("the --oauth-* options are for a URL backend (wrap -- URL)")
    return Settings(
        target=target,
        headers=_parse_headers(opts["headers"]),
        oauth=oauth,
        timeout=opts["timeout"],
        transport=opts["transport"],
        host=opts["host"],
        port=opts["port"],
        token_file=opts.get("token_file") if opts["transport"] == "streamable-http" else None,
        max_sessions=opts.get("max_sessions", 16),
        max_body=_size(opts.get("max_body") or "16M"),
        server_name=opts["server_name"],
        dedup=not opts["no_dedup"],
        shrink=not opts["no_shrink"],
        budget=_budget(opts["budget"], opts["shrinkfit"]),
        truncate_chars=_truncate_chars(opts["truncate_chars"], not opts["no_shrink"]),
        shrink_above=_shrink_above(opts["shrink_above"]),
        toonify=opts["toonify"],
        drop_duplicate_structured=opts.get("drop_duplicate_structured", False),
        recovery=opts["recovery"],
        recovery_dir=opts["recovery_dir"] or default_recovery_dir(),
        cache_ttl=ttl if ttl is not None else math.inf,  # off: entries and bytes still bound it
        cache_entries=opts["cache_entries"],
        cache_bytes=_size(opts["cache_bytes"]),
        retention=_keep(opts["retention"], "--retention"),
        jobs=opts["jobs"],
        stats_file=opts["stats_file"],
        quiet=opts.get("quiet", False),
        **_shared_store(opts),
    )


def _shared_store(opts: dict[str, Any]) -> dict[str, Any]:
    """--recovery-url and --tenant, checked as the config file checks them."""
    from ..settings import DEFAULT_KEYS

    values = {k: opts.get(k) for k in ("recovery_url", "tenant") if opts.get(k) is not None}
    for key, value in values.items():
        try:
            DEFAULT_KEYS[key](value)
        except ValueError as exc:
            raise click.BadParameter(str(exc), param_hint="--" + key.replace("_", "-")) from exc
    return values


@main.command(context_settings={"ignore_unknown_options": False})
@click.option(
    "--config",
    "config",
    type=click.Path(path_type=Path, dir_okay=False),
    default=None,
    help=_CONFIG_HELP + ' A servers JSON ({"mcpServers": ...}) is also accepted here, as --servers.',
)
@click.option(
    "--servers",
    "servers_file",
    type=click.Path(path_type=Path, dir_okay=False),
    default=None,
    help='Servers JSON: {"mcpServers": {name: {command, args, env, cwd} | {url, headers}}}.',
)
@click.option("-n", "--name", "name", default=None, help="Name of the one backend given after '--'.")
@click.option(
    "-H", "--header", "headers", multiple=True, metavar="KEY=VALUE", help="HTTP header for a URL backend."
)
@click.option("--include-tools", default="", help="Comma-separated globs (tool or server:tool) to expose.")
@click.option("--exclude-tools", default="", help="Comma-separated globs (tool or server:tool) to hide.")
@click.option(
    "--socket",
    "socket_path",
    type=click.Path(path_type=Path),
    default=None,
    help="Unix socket for the shim [default: MCPSQUEEZE_SOCKET or <runtime dir>/session.sock].",
)
@click.option(
    "--listen", default=None, metavar="127.0.0.1:PORT", help="Serve on loopback TCP instead (bearer token)."
)
@click.option(
    "--token-file",
    type=click.Path(path_type=Path, dir_okay=False),
    envvar="MCPSQUEEZE_TOKEN_FILE",
    default=None,
    help="Token file for --listen (created 0600 if missing) [default: <socket dir>/token].",
)
@click.option("--timeout", type=float, default=None, help="Seconds before a backend call is abandoned.")
@click.option(
    "--max-body",
    default="16M",
    show_default=True,
    metavar="SIZE",
    help="Largest HTTP request body (K/M/G suffixes); a larger one gets 413 and is never read.",
)
@oauth_options
@_shrink_options
@_output_options
@click.argument("target", nargs=-1)
def serve(target: tuple[str, ...], **opts: Any) -> None:
    """Run the session proxy for the bash shim: `serve --config FILE` or `serve -n NAME -- CMD|URL`."""
    from .._paths import default_socket
    from ..serve import Listen, run_serve
    from ..settings import ToolFilter, parse_config, parse_servers, spec_from_argv
    from ._config import read_config

    choice = read_config(opts["config"])
    try:
        servers_json = choice.servers_json
        if servers_json is not None and opts["config"] is None and (opts["servers_file"] or target):
            servers_json = None  # MCPSQUEEZE_CONFIG names a servers JSON, but servers were given here
        given = [opts["servers_file"] is not None, servers_json is not None, bool(target)]
        if sum(given) > 1:
            raise UsageError(
                "give the servers one way: --servers FILE, a servers JSON as --config, or -- CMD|URL"
            )
        if opts["servers_file"] is not None:
            specs = parse_config(opts["servers_file"].read_text(encoding="utf-8"), str(opts["servers_file"]))
        elif servers_json is not None:
            specs = parse_servers(servers_json.servers, str(servers_json.path))
        elif oauth_client(opts) is not None and not (len(target) == 1 and "://" in target[0]):
            raise UsageError(
                "the --oauth-* options are for one URL backend (serve -n NAME -- URL); a servers "
                "config takes oauth_* keys in the URL entry"
            )
        elif target:
            specs = [
                spec_from_argv(
                    opts["name"] or "backend",
                    list(target),
                    _parse_headers(opts["headers"]),
                    oauth_client(opts),
                )
            ]
        elif choice.settings.servers:
            specs = parse_servers(choice.settings.servers, str(choice.settings.path))
        else:
            raise UsageError(
                "no backend: give --servers servers.json, a config file with [mcpServers.NAME] tables, "
                "or -n NAME -- COMMAND|URL"
            )
    except (UsageError, OSError) as exc:
        raise click.UsageError(str(exc)) from exc
    tools = ToolFilter(_globs(opts["include_tools"]), _globs(opts["exclude_tools"]))
    socket_path = opts["socket_path"] or default_socket()
    tcp = None
    if opts["listen"]:
        host, _, port = opts["listen"].rpartition(":")
        if not host or not port.isdigit():
            raise click.BadParameter("use HOST:PORT, e.g. 127.0.0.1:8766", param_hint="--listen")
        tcp = (host.strip("[]"), int(port))
    token_file = (opts["token_file"] or socket_path.parent / "token") if tcp else None
    listen = Listen(None if tcp else socket_path, tcp, token_file)
    settings = _settings(
        [], {**opts, "transport": "stdio", "host": "127.0.0.1", "port": 0, "server_name": ""}, choice
    )
    if settings.recovery == "memory":  # from the flag or the config file
        raise click.BadParameter(
            "serve always keeps recovery files (the shim reads them)", param_hint="--recovery"
        )
    _configure_logging(opts["log_level"])
    sys.exit(_run(run_serve, settings, specs, tools, listen))


def _globs(text: str) -> tuple[str, ...]:
    return tuple(p.strip() for p in text.split(",") if p.strip())


@main.command("config", context_settings={"ignore_unknown_options": False})
@click.option(
    "--tool",
    "tools",
    multiple=True,
    metavar="SERVER:TOOL",
    help="Also print the effective policy of this tool (repeatable).",
)
@click.option(
    "--name", "server_name", default="backend", show_default=True, help="Backend name, as for wrap."
)
@click.option("--timeout", type=float, default=None, help="As for wrap.")
@_config_option
@_shrink_options
@click.argument("target", nargs=-1)
def config_command(target: tuple[str, ...], tools: tuple[str, ...], **opts: Any) -> None:
    """Print the effective settings and where each came from: flag, env, file:line or default.

    Takes the same options as `wrap` (`mcpsqueeze config --config F --budget 9000`).
    """
    from ._config import read_config, render_effective

    choice = read_config(opts["config"])
    flags = {"headers": (), "transport": "stdio", "host": "127.0.0.1", "port": 0, "token_file": None}
    settings = _settings(list(target), {**flags, **opts}, choice)
    click.echo(render_effective(settings, choice, click.get_current_context(), tools), nl=False)


@main.command()
@click.option(
    "--socket", "socket_path", type=click.Path(path_type=Path), default=None, help="Session socket."
)
def health(socket_path: Path | None) -> None:
    """Exit 0 when the session answers and all its backends are up (for HEALTHCHECK)."""
    from .._paths import default_socket
    from ..bash import SessionAddress, SessionClient

    path = str(socket_path or default_socket())
    try:
        status, body = SessionClient(SessionAddress(socket_path=path)).request(
            "GET", "/v1/health", timeout=10
        )
    except BackendError as exc:
        click.echo(f"mcpsqueeze health: no session at {path}: {exc}", err=True)
        sys.exit(exit_code(exc))
    states = body.get("servers", {}) if isinstance(body, dict) else {}
    down = [name for name, state in states.items() if state != "up"]
    if status != 200 or down:
        click.echo(f"mcpsqueeze health: backends down: {', '.join(down) or '?'}", err=True)
        sys.exit(EXIT_BACKEND)
    click.echo("ok")


@main.command("install-commands")
@click.argument("directory", type=click.Path(path_type=Path, file_okay=False))
@click.option(
    "--server", "servers", multiple=True, help="Server name (repeatable) [default: ask the session]."
)
@click.option(
    "--lang",
    type=click.Choice(["bash", "python", "typescript"]),
    default="bash",
    show_default=True,
    help="bash: one shell command per server; python/typescript: Code Mode modules of typed functions.",
)
def install_commands(directory: Path, servers: tuple[str, ...], lang: str) -> None:
    """Write one command (or Code Mode module) per server into DIRECTORY.

    bash: `DIR/github search-issues --query x`; python/typescript: `github.search_issues(query="x")`
    (see docs/code-mode.md).
    """
    from ..bash import SessionClient
    from ..bash import install_commands as install

    try:
        listing: list[dict[str, Any]] = []
        client = None  # bash commands for named servers need no session now (they find it at call time)
        if not servers or lang != "bash":
            client = SessionClient.from_environ()
            status, body = client.request("GET", "/v1/servers")
            if status != 200 or not isinstance(body, dict):
                raise BackendError(f"the session answered HTTP {status} to /v1/servers")
            listing = [s for s in body.get("servers", []) if not servers or s["name"] in servers]
            missing = sorted(set(servers) - {s["name"] for s in listing})
            if missing:
                raise UsageError(f"the session has no server named {', '.join(missing)}")
        names = list(servers) or [s["name"] for s in listing]
        down: list[str] = []
        if lang == "bash":
            paths = install(directory, names, sys.executable)
        else:
            assert client is not None
            paths, down = _write_code_mode(lang, directory, listing, client.address)
        for path in paths:
            click.echo(path)
        for reason in down:
            click.echo(
                f"mcpsqueeze install-commands: {reason}: its module was not written (one already there is "
                "kept); rerun when the server is up",
                err=True,
            )
        if down:
            sys.exit(EXIT_UNREACHABLE)
        if lang == "bash":
            from ..bash import server_command

            for name in names:
                warning = server_command(name)[1]
                if warning:
                    click.echo(f"mcpsqueeze install-commands: warning: {warning}", err=True)
    except MCPSqueezeError as exc:
        click.echo(f"mcpsqueeze install-commands: {exc}", err=True)
        sys.exit(exit_code(exc))


def _write_code_mode(
    lang: str, directory: Path, listing: list[dict[str, Any]], address: Any
) -> tuple[list[Path], list[str]]:
    """Write the modules of the servers that are up; return the paths and why the others were not."""
    from ..codemode import Endpoint, node_warning, split_listing, write_code_client

    if address.socket_path is not None:
        endpoint = Endpoint(socket_path=str(Path(address.socket_path).absolute()))
    else:
        host = f"[{address.host}]" if ":" in address.host else address.host
        token = str(Path(address.token_file).absolute()) if address.token_file else None
        endpoint = Endpoint(url=f"http://{host}:{address.port}", token_file=token)
    tools, down = split_listing(listing)
    if lang == "typescript":
        warning = node_warning()
        if warning:
            click.echo(f"mcpsqueeze install-commands: warning: {warning}", err=True)
    if not tools and down:
        return [], down
    written = write_code_client("python" if lang == "python" else "typescript", directory, tools, endpoint)
    return written, down


@main.command()
@click.argument(
    "paths", nargs=-1, required=True, type=click.Path(path_type=Path, exists=True, dir_okay=False)
)
@click.option(
    "--top", type=int, default=5, show_default=True, help="How many of the biggest results to list."
)
@click.option("--json", "as_json", is_flag=True, help="Print the report as one JSON object.")
@click.option(
    "--html",
    "html_path",
    type=click.Path(path_type=Path, dir_okay=False),
    default=None,
    help="Also write a self-contained HTML page (charts, no network) to this file.",
)
def stats(paths: tuple[Path, ...], top: int, as_json: bool, html_path: Path | None) -> None:
    """Summarise --stats-file files: totals, per tool, per session, biggest results, recoveries."""
    from ..accounting import load_report, render_json, render_text, write_html

    try:
        report = load_report(list(paths), top)
        if html_path is not None:
            write_html(report, html_path)
    except OSError as exc:
        click.echo(f"mcpsqueeze stats: {exc}", err=True)
        sys.exit(EXIT_USAGE)
    click.echo(render_json(report) if as_json else render_text(report))
    if html_path is not None:
        click.echo(f"mcpsqueeze stats: wrote {html_path}", err=True)


@main.command()
@click.option("--budget", type=int, default=4000, show_default=True, help="Budget used for the demo.")
@click.option("--no-shrink", is_flag=True, help="Show dedup only.")
def demo(budget: int, no_shrink: bool) -> None:
    """Run a scripted agent session through the proxy against the bundled demo server."""
    from ..demo.driver import run_demo

    if budget < MIN_BUDGET:
        raise click.BadParameter(f"the budget must be at least {MIN_BUDGET} characters")
    sys.exit(_run(run_demo, budget, no_shrink))


@main.command()
@click.argument("directory", type=click.Path(path_type=Path, file_okay=False))
@click.option(
    "--max-age", default="24h", show_default=True, help="Delete originals older than this; 'off' keeps all."
)
@click.option("--max-bytes", default=None, help="Then delete oldest first until the directory is this small.")
@click.option("--dry-run", is_flag=True, help="Say what would be deleted; delete nothing.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
def clean(directory: Path, max_age: str, max_bytes: str | None, dry_run: bool, as_json: bool) -> None:
    """Delete old recovery files (only mcpsqueeze's own, never following symlinks)."""
    import dataclasses
    import json

    from ..recovery import clean_directory

    age = _keep(max_age, "--max-age")
    try:
        report = clean_directory(directory, age, _size(max_bytes) if max_bytes else None, dry_run)
    except MCPSqueezeError as exc:
        click.echo(f"mcpsqueeze clean: {exc}", err=True)
        sys.exit(exit_code(exc))
    if as_json:
        click.echo(json.dumps(dataclasses.asdict(report)))
    else:
        verb = "would delete" if dry_run else "deleted"
        click.echo(
            f"{verb} {len(report.deleted)} file(s), {report.bytes_freed} bytes; "
            f"kept {report.kept} file(s), {report.kept_bytes} bytes"
        )
        for error in report.errors:
            click.echo(f"error: {error}", err=True)
    sys.exit(EXIT_TOOL_ERROR if report.errors else 0)


from ._auth import auth as _auth_group  # noqa: E402 - registered after main is defined

main.add_command(_auth_group, "auth")
