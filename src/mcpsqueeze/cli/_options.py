"""What the commands share: the knobs' kinds as click parameter types (a flag's text is read by the same
checker as the config file's value and the library's keyword, settings/_kinds.py, so a bound is checked
in one place), and the one way a command reports its errors (`reported`)."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import click
from click.core import ParameterSource

from .._errors import MCPSqueezeError, UsageError, exit_code
from ..settings import KNOBS, Kind, Knob, OAuthClient, Seconds

__all__ = [
    "OFF",
    "SECONDS",
    "KindType",
    "checked_oauth",
    "file_option",
    "given_by",
    "knob_options",
    "knob_values",
    "reported",
]

F = TypeVar("F", bound=Callable[..., Any])


OFF: Any = object()  # a flag given as 'off' (None as a knob's value), told apart from a flag not given (None)


class KindType(click.ParamType[Any, Any]):
    """A click type that parses with one `Kind` (a ValueError becomes click's usage error, exit 2)."""

    def __init__(self, kind: Kind) -> None:
        self.kind = kind
        self.name = type(kind).__name__.lower()

    def get_metavar(self, param: click.Parameter, ctx: click.Context | None = None) -> str:
        return self.kind.metavar

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if not isinstance(value, str):  # a default, already a value
            return value
        try:
            parsed = self.kind.parse(value)
        except ValueError as exc:
            self.fail(str(exc), param, ctx)
        return OFF if parsed is None else parsed


class _ManyType(KindType):
    """A kind given once per value: its variable holds one value a line (values hold spaces: `Bearer x`)."""

    envvar_list_splitter = "\n"


SECONDS = KindType(Seconds())


class _Switch(click.types.BoolParamType):
    """click's boolean (so a switch stays a switch), read by the knob's own kind: its message lists the
    words a variable takes (click's listed an empty string among them)."""

    def __init__(self, kind: Kind) -> None:
        self.kind = kind

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, bool):
            return value
        try:
            return self.kind.parse(str(value))
        except ValueError as exc:
            self.fail(f"{exc} (also 1/0, yes/no, on/off)", param, ctx)


class KnobOption(click.Option):
    """A knob's option: an error about a value its variable gave names the variable, not the flag."""

    def get_error_hint(self, ctx: click.Context | None) -> str:
        if (
            ctx is not None
            and self.name
            and isinstance(self.envvar, str)
            and ctx.get_parameter_source(self.name) is ParameterSource.ENVIRONMENT
        ):
            return self.envvar
        return super().get_error_hint(ctx)


def _help(row: Knob) -> str:
    text = row.help
    if row.switch is None and (row.default_text or row.default not in (None, (), {})):  # (a switch: no value)
        text += f" [default: {row.default_shown()}]"
    env = row.env_name
    if env:
        value = "" if row.switch is None else "=true" if row.switch else "=false"
        text += f" [env: {env}{value}]"
    return text


def checked_oauth(make: Callable[[], OAuthClient | None]) -> OAuthClient | None:
    """The OAuth client the oauth_* options describe (`make`), its secret file read now: a bad one is a
    usage error before anything runs, not mid-login."""
    try:
        client = make()
        if client is not None:
            client.client_secret()
        return client
    except UsageError as exc:
        raise click.BadParameter(str(exc), param_hint="--oauth-*") from exc


@contextlib.contextmanager
def reported(prefix: str, also: type[Exception] = MCPSqueezeError) -> Iterator[None]:
    """Our errors (and those of the type `also`) as one stderr line, `PREFIX: message`, and the exit code
    each maps to (`exit_code`)."""
    try:
        yield
    except (MCPSqueezeError, also) as exc:
        click.echo(f"{prefix}: {exc}", err=True)
        sys.exit(exit_code(exc))


def file_option(*names: str, help: str) -> Callable[[F], F]:
    """An option that names one file (a directory is refused), as a Path; None when not given."""
    return click.option(*names, type=click.Path(path_type=Path, dir_okay=False), default=None, help=help)


def knob_option(row: Knob) -> Callable[[F], F]:
    """The click option of one row: its flag, its `MCPSQUEEZE_*` variable, its kind; default None, so
    a flag not given leaves the config file's value or the row's default."""
    names = [n for n in (row.short, row.flag_name) if n]
    common: dict[str, Any] = {"default": None, "envvar": row.env_name, "help": _help(row), "cls": KnobOption}
    if row.switch is not None:  # --toonify sets the knob; --no-shrink clears it (its variable: the value)
        return click.option(*names, row.name, flag_value=row.switch, type=_Switch(row.kind), **common)
    kind = (_ManyType if row.kind.many else KindType)(row.kind)
    option = click.option(
        *names, row.name, type=kind, metavar=row.kind.metavar, multiple=row.kind.many, **common
    )
    if row.alias is None:
        return option
    alias = click.option(  # a bare alias is the default (--shrinkfit)
        row.alias,
        type=KindType(row.kind),
        is_flag=False,
        flag_value=row.kind.show(row.default),
        default=None,
        metavar="[N]",
        help=f"Alias of {row.flag_name} (mcp-compressor compatible).",
    )
    return lambda func: alias(option(func))


def given_by(row: Knob) -> tuple[str, ...]:
    """The CLI parameters that set a row's knob: its own, and its alias's (click names it after its flag)."""
    return (row.name, row.alias.lstrip("-").replace("-", "_")) if row.alias else (row.name,)


def knob_options(command: str) -> Callable[[F], F]:
    """Every row of the table whose doors include `command` (wrap, serve, config), as click options."""
    chosen = [row for row in KNOBS if command in row.doors and row.flag is not None]

    def apply(func: F) -> F:
        for row in reversed(chosen):
            func = knob_option(row)(func)
        return func

    return apply


def knob_values(opts: dict[str, Any], command: str) -> dict[str, Any]:
    """The knob values a command line (or its variables) gave: {name: value}, None left out."""
    values: dict[str, Any] = {}
    for row in KNOBS:
        if command not in row.doors or row.flag is None:
            continue
        value = next((opts[n] for n in given_by(row) if opts.get(n) not in (None, ())), None)
        if value is not None:
            values[row.name] = row.kind.check(value) if row.kind.many else None if value is OFF else value
    return values
