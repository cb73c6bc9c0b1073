"""The `mcpsqueeze` command line: each command parses its flags into settings and calls its door's
runner; only here do errors become exit codes (`_errors.exit_code`)."""

from __future__ import annotations

from ._main import main

__all__ = ["main"]
