"""The `mcpsqueeze` command line: parse into Settings, call the runner, map errors to exit codes.

Exit codes (all CLIs): 0 ok, 1 the tool reported an error, 2 usage error or refused input,
3 session or backend unreachable, 4 backend failure or timeout.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from ._errors import BackendError, MCPSqueezeError, UsageError
from .settings import DEFAULT_BUDGET, MIN_BUDGET, Settings, default_recovery_dir

__all__ = ["main"]


def _parse_headers(values: tuple[str, ...]) -> dict[str, str]:
    headers: dict[str, str] = {}
    for value in values:
        key, sep, val = value.partition("=")
        if not sep or not key.strip():
            raise click.BadParameter(f"{value!r} is not KEY=VALUE", param_hint="-H/--header")
        headers[key.strip()] = val
    return headers


def _duration(value: str | None) -> float | None:
    if value is None or value in ("0", "off", "never"):
        return None
    from .recovery import parse_duration

    try:
        return parse_duration(value)
    except UsageError as exc:
        raise click.BadParameter(str(exc)) from exc


def _size(value: str) -> int:
    from .recovery import parse_size

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
        return 3 if isinstance(ours, BackendError) else 2


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="mcpsqueeze")
def main() -> None:
    """A transparent MCP proxy that shrinks, deduplicates and counts tool results.

    Every shrunk or deduplicated result stays recoverable, byte for byte.
    """


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
        click.option("--cache-ttl", default="300s", show_default=True, help="Memory cache entry lifetime."),
        click.option(
            "--cache-entries", type=int, default=32, show_default=True, help="Memory cache entries."
        ),
        click.option("--cache-bytes", default="32M", show_default=True, help="Memory cache size."),
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


def _budget(budget: int | None, shrinkfit: int | None) -> int:
    value = budget if budget is not None else shrinkfit if shrinkfit is not None else DEFAULT_BUDGET
    if value < MIN_BUDGET:
        raise click.BadParameter(f"the budget must be at least {MIN_BUDGET} characters, got {value}")
    return value


@main.command(context_settings={"ignore_unknown_options": False})
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
@_shrink_options
@click.argument("target", nargs=-1, required=True)
def wrap(target: tuple[str, ...], **opts: Any) -> None:
    """Proxy one MCP server: `wrap [OPTIONS] -- COMMAND [ARGS...]` or `wrap [OPTIONS] -- URL`."""
    if opts["transport"] == "stdio" and not (
        len(target) == 1 and target[0].startswith(("http://", "https://"))
    ):
        from ._prestart import prestart

        prestart(target)  # the backend boots while the settings are checked and the relay is imported
    try:
        settings = _settings(list(target), opts)
        from .proxy import run_wrap

        code = _run(run_wrap, settings)
    finally:
        from ._prestart import discard

        discard()  # a backend started early but never adopted (bad settings, failed start) is stopped
    sys.exit(code)


def _settings(target: list[str], opts: dict[str, Any]) -> Settings:
    if opts["timeout"] is not None and opts["timeout"] <= 0:
        raise click.BadParameter("--timeout must be positive")
    if opts["jobs"] < 1:
        raise click.BadParameter("--jobs must be at least 1")
    ttl = _duration(opts["cache_ttl"])
    return Settings(
        target=target,
        headers=_parse_headers(opts["headers"]),
        timeout=opts["timeout"],
        transport=opts["transport"],
        host=opts["host"],
        port=opts["port"],
        token_file=opts.get("token_file") if opts["transport"] == "streamable-http" else None,
        server_name=opts["server_name"],
        dedup=not opts["no_dedup"],
        shrink=not opts["no_shrink"],
        budget=_budget(opts["budget"], opts["shrinkfit"]),
        recovery=opts["recovery"],
        recovery_dir=opts["recovery_dir"] or default_recovery_dir(),
        cache_ttl=ttl if ttl is not None else 300.0,
        cache_entries=opts["cache_entries"],
        cache_bytes=_size(opts["cache_bytes"]),
        retention=_duration(opts["retention"]),
        jobs=opts["jobs"],
        stats_file=opts["stats_file"],
    )


@main.command(context_settings={"ignore_unknown_options": False})
@click.option(
    "--config",
    "config",
    type=click.Path(path_type=Path, dir_okay=False),
    envvar="MCPSQUEEZE_CONFIG",
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
@_shrink_options
@click.argument("target", nargs=-1)
def serve(target: tuple[str, ...], **opts: Any) -> None:
    """Run the session proxy for the bash shim: `serve --config FILE` or `serve -n NAME -- CMD|URL`."""
    from ._paths import default_socket
    from .serve import Listen, ToolFilter, parse_config, run_serve, spec_from_argv

    try:
        if opts["config"] is not None and target:
            raise UsageError("give either --config FILE or -n NAME -- COMMAND|URL, not both")
        if opts["config"] is not None:
            specs = parse_config(opts["config"].read_text(encoding="utf-8"), str(opts["config"]))
        elif target:
            specs = [spec_from_argv(opts["name"] or "backend", list(target), _parse_headers(opts["headers"]))]
        else:
            raise UsageError("no backend: give --config FILE or -n NAME -- COMMAND|URL")
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
    if opts["recovery"] == "memory":
        raise click.BadParameter(
            "serve always keeps recovery files (the shim reads them)", param_hint="--recovery"
        )
    token_file = (opts["token_file"] or socket_path.parent / "token") if tcp else None
    listen = Listen(None if tcp else socket_path, tcp, token_file)
    settings = _settings(
        [], {**opts, "transport": "stdio", "host": "127.0.0.1", "port": 0, "server_name": ""}
    )
    sys.exit(_run(run_serve, settings, specs, tools, listen))


def _globs(text: str) -> tuple[str, ...]:
    return tuple(p.strip() for p in text.split(",") if p.strip())


@main.command()
@click.option(
    "--socket", "socket_path", type=click.Path(path_type=Path), default=None, help="Session socket."
)
def health(socket_path: Path | None) -> None:
    """Exit 0 when the session answers and all its backends are up (for HEALTHCHECK)."""
    from ._paths import default_socket
    from .bash import SessionAddress, SessionClient

    path = str(socket_path or default_socket())
    try:
        status, body = SessionClient(SessionAddress(socket_path=path)).request(
            "GET", "/v1/health", timeout=10
        )
    except BackendError as exc:
        click.echo(f"mcpsqueeze health: no session at {path}: {exc}", err=True)
        sys.exit(3)
    states = body.get("servers", {}) if isinstance(body, dict) else {}
    down = [name for name, state in states.items() if state != "up"]
    if status != 200 or down:
        click.echo(f"mcpsqueeze health: backends down: {', '.join(down) or '?'}", err=True)
        sys.exit(4)
    click.echo("ok")


@main.command("install-commands")
@click.argument("directory", type=click.Path(path_type=Path, file_okay=False))
@click.option(
    "--server", "servers", multiple=True, help="Server name (repeatable) [default: ask the session]."
)
def install_commands(directory: Path, servers: tuple[str, ...]) -> None:
    """Write one command per server into DIRECTORY, so an agent can type `github search-issues --query x`."""
    from .bash import SessionClient
    from .bash import install_commands as install

    try:
        names = list(servers)
        if not names:
            status, body = SessionClient.from_environ().request("GET", "/v1/servers")
            if status != 200 or not isinstance(body, dict):
                raise BackendError(f"the session answered HTTP {status} to /v1/servers")
            names = [server["name"] for server in body.get("servers", [])]
        for path in install(directory, names, sys.executable):
            click.echo(path)
    except BackendError as exc:
        click.echo(f"mcpsqueeze install-commands: {exc}", err=True)
        sys.exit(3)
    except MCPSqueezeError as exc:
        click.echo(f"mcpsqueeze install-commands: {exc}", err=True)
        sys.exit(2)


@main.command()
@click.argument("path", type=click.Path(path_type=Path, exists=True, dir_okay=False))
@click.option(
    "--top", type=int, default=5, show_default=True, help="How many of the biggest results to list."
)
def stats(path: Path, top: int) -> None:
    """Summarise a --stats-file: totals, per tool, biggest results."""
    from .stats import summarise_stats_file

    click.echo(summarise_stats_file(path, top))


@main.command()
@click.option("--budget", type=int, default=4000, show_default=True, help="Budget used for the demo.")
@click.option("--no-shrink", is_flag=True, help="Show dedup only.")
def demo(budget: int, no_shrink: bool) -> None:
    """Run a scripted agent session through the proxy against the bundled demo server."""
    from .demo.driver import run_demo

    if budget < MIN_BUDGET:
        raise click.BadParameter(f"the budget must be at least {MIN_BUDGET} characters")
    sys.exit(_run(run_demo, budget, no_shrink))


@main.command()
@click.argument("directory", type=click.Path(path_type=Path, file_okay=False))
@click.option("--max-age", default="24h", show_default=True, help="Delete originals older than this.")
@click.option("--max-bytes", default=None, help="Then delete oldest first until the directory is this small.")
@click.option("--dry-run", is_flag=True, help="Say what would be deleted; delete nothing.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
def clean(directory: Path, max_age: str, max_bytes: str | None, dry_run: bool, as_json: bool) -> None:
    """Delete old recovery files (only mcpsqueeze's own, never following symlinks)."""
    import dataclasses
    import json

    from .recovery import clean_directory

    age = _duration(max_age)
    try:
        report = clean_directory(
            directory, age if age is not None else 0.0, _size(max_bytes) if max_bytes else None, dry_run
        )
    except MCPSqueezeError as exc:
        click.echo(f"mcpsqueeze clean: {exc}", err=True)
        sys.exit(2)
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
    sys.exit(1 if report.errors else 0)


if __name__ == "__main__":  # pragma: no cover
    main()
