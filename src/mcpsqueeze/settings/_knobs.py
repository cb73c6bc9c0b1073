"""One table of settings: every knob declared once, a field of `Policy` (per tool) or `Settings` (per session)
made by `knob(...)`, with its kind, default, help, flag (and alias), variable, config key and API keyword.
From the table (`KNOBS`, _table.py) come the CLI options of `wrap`, `serve`, `config` and `auth login`, the
`[defaults]` and `[policies]` keys, the keywords of `Squeezer`, `shrink_tools` and `Client`, and the
`mcpsqueeze config` printout. To add a knob: one `knob(...)` field, and the code that reads it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ._kinds import Kind

__all__ = ["CLI", "SAME", "Knob", "knob"]

CLI = frozenset({"wrap", "serve", "config"})
ALL_DOORS = CLI | {"squeezer", "client"}
SAME: Any = object()  # the library's default is the CLI's


@dataclass(frozen=True)
class Knob:
    """One row of the table. `name` is the field, the `[defaults]` key and the API keyword."""

    kind: Kind
    help: str
    name: str = ""  # filled in from the field's name
    default: Any = None  # filled in from the field's default (or its factory's value)
    flag: str | None = ""  # "": --NAME-WITH-DASHES; None: no flag
    short: str | None = None  # "-q"
    alias: str | None = None  # another flag, whose value may be left out (then: the default)
    switch: bool | None = None  # a flag without a value: True sets the knob (--toonify), False clears it
    env: str | None = ""  # "": MCPSQUEEZE_<NAME>; None: none
    config: bool = True  # a `[defaults]` key (a Policy knob is also a `[policies]` key)
    doors: frozenset[str] = ALL_DOORS  # wrap, serve, config (the CLI) and squeezer, client (the library)
    library: Any = SAME  # the library's default, where it differs from the CLI's
    default_text: str = ""  # the default as --help shows it ("24h", "none"), when not the kind's printout

    @property
    def flag_name(self) -> str | None:
        if self.flag is None:
            return None
        return self.flag or "--" + self.name.replace("_", "-")

    @property
    def env_name(self) -> str | None:
        if self.env is None:
            return None
        return self.env or "MCPSQUEEZE_" + self.name.upper()

    def default_shown(self) -> str:
        return self.default_text or self.kind.show(self.default)

    def library_default(self) -> Any:
        return self.default if self.library is SAME else self.library


KNOB = "mcpsqueeze.knob"


def knob(
    default: Any = None,
    kind: Kind | None = None,
    help: str = "",
    *,
    factory: Callable[[], Any] | None = None,
    **row: Any,
) -> Any:
    """A dataclass field that is a row of the table (typed `Any` so the field keeps its annotation)."""
    assert kind is not None, "every knob has a kind"
    meta = {KNOB: Knob(kind, help, **row)}
    if factory is not None:
        return dataclasses.field(default_factory=factory, metadata=meta)
    return dataclasses.field(default=default, metadata=meta)


def rows(cls: type) -> list[Knob]:
    """The knobs of one dataclass, in field order, with their names and defaults filled in."""
    found = []
    for f in dataclasses.fields(cls):
        row = f.metadata.get(KNOB)
        if row is None:
            continue
        made = f.default_factory is not dataclasses.MISSING
        default = f.default_factory() if made else f.default  # type: ignore[operator]
        found.append(dataclasses.replace(row, name=f.name, default=default))
    return found
