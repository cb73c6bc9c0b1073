"""The knobs' kinds as click parameter types: a flag's text is read by the same checker as the config
file's value and the library's keyword (settings/_kinds.py), so a bound is checked in one place."""

from __future__ import annotations

from typing import Any

import click

from ..settings._kinds import Kind, Seconds

__all__ = ["SECONDS", "KindType"]


class KindType(click.ParamType):
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
            return self.kind.parse(value)
        except ValueError as exc:
            self.fail(str(exc), param, ctx)


SECONDS = KindType(Seconds())
