"""The `mcpsqueeze` command line: one module per command; each parses its flags into settings and calls
its door's runner; only here do errors become exit codes (`_errors.exit_code`).

`main` loads on first use: the console script (`mcpsqueeze.__main__`) starts a wrapped backend before
click is imported.
"""

from __future__ import annotations

TYPE_CHECKING = False  # not `typing.TYPE_CHECKING`: importing typing is not free at start-up
if TYPE_CHECKING:
    from ._main import main

__all__ = ["main"]


def __getattr__(name: str) -> object:
    if name != "main":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from ._main import main

    return main
