"""Recovery: keep every shrunk original retrievable, in memory and in private files.

Everything imported eagerly here is standard library only (plus ``mcpsqueeze._errors``),
because the shell shim imports this package on every ``mcpsq recover``. The pipeline's
facade in ``_store`` needs orjson, so it is loaded on first use instead.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from ._clean import CleanReport, clean_directory, parse_duration, parse_keep, parse_size
from ._files import FileStore, ensure_private_dir
from ._ids import RESPONSE_ID_RE, is_response_id, new_response_id
from ._lines import parse_line_range, read_lines, split_lines
from ._memory import MemoryCache
from ._pointer import read_window, resolve_pointer
from ._scoped import open_recovery_file

if TYPE_CHECKING:
    from ._store import RecoveryStore, Stored, recover_call, recover_result

__all__ = [
    "RESPONSE_ID_RE",
    "CleanReport",
    "FileStore",
    "MemoryCache",
    "RecoveryStore",
    "Stored",
    "clean_directory",
    "ensure_private_dir",
    "is_response_id",
    "new_response_id",
    "open_recovery_file",
    "parse_duration",
    "parse_keep",
    "parse_line_range",
    "parse_size",
    "read_lines",
    "read_window",
    "recover_call",
    "recover_result",
    "resolve_pointer",
    "split_lines",
]

_LAZY = {"RecoveryStore", "Stored", "recover_call", "recover_result"}


def __getattr__(name: str) -> Any:
    """Load the orjson-backed store only when the proxy asks for it, never on the shim's path."""
    if name in _LAZY:
        value = getattr(importlib.import_module("._store", __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
