"""The `mcpsqueeze` command line: parse into Settings, call the runner, map errors to exit codes.

Exit codes (all CLIs): 0 ok, 1 the tool reported an error, 2 usage error or refused input,
3 session or backend unreachable, 4 backend failure or timeout (one table: `_errors.exit_code`).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from .._errors import (
    EXIT_BACKEND,
    EXIT_TOOL_ERROR,
    EXIT_UNREACHABLE,
    BackendError,
    MCPSqueezeError,
    UsageError,
    exit_code,
    first_leaf,
)
from .._logging import configure_logging as _configure_logging
from .._net import is_url
from .._paths import default_socket
from ..settings import (
    Duration,
    Settings,
    Size,
    ToolFilter,
    knob_named,
    parse_config,
    parse_servers,
    read_servers_file,
    spec_from_argv,
)
from ._config import apply_config, read_config, render_effective
from ._options import OFF, KindType, checked_oauth, file_option, knob_options, knob_values, reported

__all__ = ["main"]


def _run(coro_fn: Any, *args: Any) -> int:
    import anyio

    try:
        code: int = anyio.run(coro_fn, *args)
        return code
    except KeyboardInterrupt:
        return 130
    except BaseException as exc:
        # our error, also inside (possibly nested) task-group exception groups
        group = exc.subgroup(MCPSqueezeError) if isinstance(exc, BaseExceptionGroup) else exc
        ours = first_leaf(group) if group is not None else None
        if not isinstance(ours, MCPSqueezeError):
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


_CONFIG_HELP = (
    'Settings file (TOML: [defaults], [policies."server:tool"]) [default: MCPSQUEEZE_CONFIG or '
    "<user config dir>/config.toml]; see docs/config.md."
)


_CONFIG_OPTION = file_option("--config", "config", help=_CONFIG_HELP)


# The server command starts at wrap's first positional argument and everything after it is the server's
# (its own flags too), with or without `--`: some clients (the MCP Inspector CLI) drop the separator.
@main.command(context_settings={"allow_interspersed_args": False})
@_CONFIG_OPTION
@knob_options("wrap")
@click.argument("target", nargs=-1, required=True, type=click.UNPROCESSED)
def wrap(target: tuple[str, ...], **opts: Any) -> None:
    """Proxy one MCP server: `wrap [OPTIONS] [--] COMMAND [ARGS...]` or `wrap [OPTIONS] [--] URL`.

    Everything from COMMAND on belongs to the server, its own options included.
    """
    choice = read_config(opts["config"])
    if choice.servers_json is not None and opts["config"] is not None:
        raise click.UsageError(
            f"{opts['config']} is a servers JSON (for serve); wrap takes its backend after '--' and a "
            "TOML settings file as --config (see docs/config.md)"
        )
    settings = _settings(list(target), opts, choice, "wrap")
    _configure_logging(settings.log_level)
    backend = None
    if settings.transport == "stdio" and not settings.is_url:
        # spawned before the proxy's modules import, so that the server boots meanwhile (the start-up figure
        # in docs/benchmarks.md); its first message takes the same path as every other
        from .._spawn import spawn

        with reported("mcpsqueeze"):
            backend = spawn(settings.target)
    from ..proxy import run_wrap

    sys.exit(_run(run_wrap, settings, None, None, backend))


def _settings(target: list[str], opts: dict[str, Any], choice: Any, command: str) -> Settings:
    """Settings from the knobs the command line gave (checked by their kinds as they were parsed), with the
    config file's defaults and policies under them."""
    values = knob_values(opts, command)
    if values.get("truncate_chars") is not None and values.get("shrink") is False:
        raise click.BadParameter("--truncate-chars shrinks results; it cannot go with --no-shrink")
    if command != "serve" and values.get("transport", "stdio") != "streamable-http":
        values.pop("token_file", None)  # (the stdio frontend takes no token)
    settings = Settings.make(target, **values)
    oauth = checked_oauth(lambda: settings.oauth)
    if oauth is not None and command != "serve" and not is_url(target):
        raise click.BadParameter("the --oauth-* options are for a URL backend (wrap -- URL)")
    return apply_config(settings, choice.settings, click.get_current_context())


@main.command(context_settings={"ignore_unknown_options": False})
@file_option(
    "--config",
    "config",
    help=_CONFIG_HELP + ' A servers JSON ({"mcpServers": ...}) is also accepted here, as --servers.',
)
@knob_options("serve")
@click.argument("target", nargs=-1)
def serve(target: tuple[str, ...], **opts: Any) -> None:
    """Run the session proxy for the bash shim: `serve --config FILE` or `serve -n NAME -- CMD|URL`."""
    from ..recovery import make_private
    from ..serve import Listen, run_serve

    choice = read_config(opts["config"])
    settings = _settings([], opts, choice, "serve")
    try:
        servers_json, servers_file = choice.servers_json, settings.servers_file
        if servers_json is not None and opts["config"] is None and (servers_file or target):
            servers_json = None  # MCPSQUEEZE_CONFIG names a servers JSON, but servers were given here
        if sum([servers_file is not None, servers_json is not None, bool(target)]) > 1:
            raise UsageError(
                "give the servers one way: --servers FILE, a servers JSON as --config, or -- CMD|URL"
            )
        if servers_file is not None:
            specs = parse_config(read_servers_file(servers_file), str(servers_file))
        elif servers_json is not None:
            specs = parse_servers(servers_json.servers, str(servers_json.path))
        elif settings.oauth is not None and not is_url(target):
            raise UsageError(
                "the --oauth-* options are for one URL backend (serve -n NAME -- URL); a servers "
                "config takes oauth_* keys in the URL entry"
            )
        elif target:
            specs = [spec_from_argv(settings.server_name, list(target), settings.headers, settings.oauth)]
        elif choice.settings.servers:
            specs = parse_servers(choice.settings.servers, str(choice.settings.path))
        else:
            raise UsageError(
                "no backend: give --servers servers.json, a config file with [mcpServers.NAME] tables, "
                "or -n NAME -- COMMAND|URL"
            )
    except (UsageError, OSError) as exc:
        raise click.UsageError(str(exc)) from exc
    socket_path = settings.socket or default_socket()
    tcp = None
    if settings.listen:
        host, _, port = settings.listen.rpartition(":")
        tcp = (host.strip("[]"), int(port))
    token_file = (settings.token_file or socket_path.parent / "token") if tcp else None
    listen = Listen(None if tcp else socket_path, tcp, token_file)
    if socket_path == default_socket(ours=True) and not (tcp and settings.token_file):
        # our own default directory: private (0700), whatever mode it was found with
        with reported("mcpsqueeze"):
            note = make_private(socket_path.parent, "socket directory")
        if note:
            click.echo(f"mcpsqueeze: {note}", err=True)
    tools = ToolFilter(settings.include_tools, settings.exclude_tools)
    if settings.recovery == "memory":  # from the flag or the config file
        raise click.BadParameter(
            "serve always keeps recovery files (the shim reads them)", param_hint="--recovery"
        )
    _configure_logging(settings.log_level)
    sys.exit(_run(run_serve, settings, specs, tools, listen))


@main.command("config", context_settings={"allow_interspersed_args": False})
@click.option(
    "--tool",
    "tools",
    multiple=True,
    metavar="SERVER:TOOL",
    help="Also print the effective policy of this tool (repeatable).",
)
@_CONFIG_OPTION
@knob_options("config")
@click.argument("target", nargs=-1, type=click.UNPROCESSED)
def config_command(target: tuple[str, ...], tools: tuple[str, ...], **opts: Any) -> None:
    """Print the effective settings and where each came from: flag, env, file:line or default.

    Takes every option of `wrap` (a pasted `wrap` line works: `mcpsqueeze config --budget 9000 -- CMD`).
    """
    choice = read_config(opts["config"])
    settings = _settings(list(target), opts, choice, "config")
    click.echo(render_effective(settings, choice, click.get_current_context(), tools), nl=False)


@main.command()
@click.option(
    "--socket", "socket_path", type=click.Path(path_type=Path), default=None, help="Session socket."
)
def health(socket_path: Path | None) -> None:
    """Exit 0 when the session answers and all its backends are up (for HEALTHCHECK)."""
    from ..bash import SessionAddress, SessionClient

    path = str(socket_path or default_socket())
    with reported(f"mcpsqueeze health: no session at {path}"):
        status, body = SessionClient(SessionAddress(socket_path=path)).request(
            "GET", "/v1/health", timeout=10
        )
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
@click.option(
    "--shadow",
    is_flag=True,
    help="bash: name a server's command after it even when a command of that name is on PATH "
    "[default: mcp-NAME, with a warning].",
)
def install_commands(directory: Path, servers: tuple[str, ...], lang: str, shadow: bool) -> None:
    """Write one command (or Code Mode module) per server into DIRECTORY.

    bash: `DIR/github search-issues --query x`; python/typescript: `github.search_issues(query="x")`
    (see docs/code-mode.md).
    """
    from ..bash import SessionClient, entry_points
    from ..bash import install_commands as install

    with reported("mcpsqueeze install-commands"):
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
            paths = install(directory, names, sys.executable, shadow)
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
            for _, warning in entry_points(directory, names, shadow).values():
                if warning:
                    click.echo(f"mcpsqueeze install-commands: warning: {warning}", err=True)


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
@file_option(
    "--html", "html_path", help="Also write a self-contained HTML page (charts, no network) to this file."
)
def stats(paths: tuple[Path, ...], top: int, as_json: bool, html_path: Path | None) -> None:
    """Summarise --stats-file files: totals, per tool, per session, biggest results, recoveries."""
    from ..accounting import load_report, render_json, render_text, write_html

    with reported("mcpsqueeze stats", OSError):
        report = load_report(list(paths), top)
        if html_path is not None:
            write_html(report, html_path)
    click.echo(render_json(report) if as_json else render_text(report))
    if html_path is not None:
        click.echo(f"mcpsqueeze stats: wrote {html_path}", err=True)


@main.command()
@click.option(
    "--budget",
    type=KindType(knob_named("budget").kind),  # the budget's one check (the table's row)
    default=4000,
    show_default=True,
    help="Budget used for the demo.",
)
@click.option("--no-shrink", is_flag=True, help="Show dedup only.")
@file_option(
    "--html",
    "html_path",
    help="Write the session's HTML report here (default: report.html in the directory the demo keeps).",
)
def demo(budget: int, no_shrink: bool, html_path: Path | None) -> None:
    """Run a scripted agent session through the proxy against the bundled demo server, show what the
    agent's model read for one shrunk result and one recovery, and keep an HTML report of the session
    (its stats file and originals stay in <user cache>/mcpsqueeze/demo)."""
    from ..demo.driver import run_demo

    sys.exit(_run(run_demo, budget, no_shrink, html_path))


@main.command()
@click.argument("directory", type=click.Path(path_type=Path, file_okay=False))
@click.option(
    "--max-age",
    type=KindType(Duration()),  # every lifetime flag's one parser: 'off'/'never' keep forever, 0 is refused
    default="24h",
    show_default=True,
    help="Delete originals older than this; 'off' keeps all.",
)
@click.option(
    "--max-bytes",
    type=KindType(Size(minimum=0)),
    default=None,
    help="Then delete oldest first until the directory is this small.",
)
@click.option("--dry-run", is_flag=True, help="Say what would be deleted; delete nothing.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
def clean(directory: Path, max_age: float, max_bytes: int | None, dry_run: bool, as_json: bool) -> None:
    """Delete old recovery files (only mcpsqueeze's own, never following symlinks)."""
    import dataclasses
    import json

    from ..recovery import clean_directory

    with reported("mcpsqueeze clean"):
        report = clean_directory(directory, None if max_age is OFF else max_age, max_bytes, dry_run)
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


from ._login import auth as _auth_group  # noqa: E402 - registered after main is defined

main.add_command(_auth_group, "auth")
