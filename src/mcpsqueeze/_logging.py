"""How library messages reach the user: library code logs to ``mcpsqueeze.*``; the CLIs show them here.

Every message keeps the text it always had on stderr: lines start with ``mcpsqueeze:`` (added when the
message does not start with ``mcpsqueeze`` already), and the session summary is shown as it is. Without
the CLI (a host importing mcpsqueeze), the logging defaults apply: warnings still reach stderr.
"""

from __future__ import annotations

import logging
import sys

__all__ = ["configure_logging"]


class _Prefixed(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        text = super().format(record)
        return text if text.startswith("mcpsqueeze") else "mcpsqueeze: " + text


class _Stderr(logging.StreamHandler):  # type: ignore[type-arg]
    """Writes to whatever ``sys.stderr`` is at the time (a CLI test runner swaps it per invocation)."""

    @property
    def stream(self) -> object:
        return sys.stderr

    @stream.setter
    def stream(self, value: object) -> None:
        pass


def configure_logging(level: str) -> None:
    """Our loggers at ``level``; libraries (the SDK logs every request at INFO) stay at WARNING."""
    root = logging.getLogger()
    if not any(isinstance(handler, _Stderr) for handler in root.handlers):
        handler = _Stderr()
        handler.setFormatter(_Prefixed("%(message)s"))
        root.addHandler(handler)
        root.setLevel(logging.WARNING)
    logging.getLogger("mcpsqueeze").setLevel(level.upper())
