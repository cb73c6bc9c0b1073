"""Recovery: keep every shrunk original retrievable, in memory and in private files.

Everything imported eagerly here is standard library only (plus ``mcpsqueeze._errors``),
because the shell shim imports this package on every ``mcpsq recover``. The composite store the
pipeline uses (``_store``) and Redis load on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import LazyFace
from ._clean import CleanReport, clean_directory, parse_duration, parse_size
from ._files import FileStore, check_if_present, ensure_private_dir, make_private, readable_by_others
from ._ids import is_response_id, new_response_id
from ._memory import MemoryCache
from ._pointer import resolve_pointer
from ._scoped import open_recovery_file

if TYPE_CHECKING:
    from ._port import Space, StoreLayer
    from ._redis import TENANT_RE, RedisStore, safe_url
    from ._store import RecoveryStore

__all__ = [
    "TENANT_RE",
    "CleanReport",
    "FileStore",
    "MemoryCache",
    "RecoveryStore",
    "RedisStore",
    "Space",
    "StoreLayer",
    "check_if_present",
    "clean_directory",
    "ensure_private_dir",
    "is_response_id",
    "make_private",
    "new_response_id",
    "open_recovery_file",
    "parse_duration",
    "parse_size",
    "readable_by_others",
    "resolve_pointer",
    "safe_url",
]

_LAZY = {
    "Space": "._port",
    "StoreLayer": "._port",
    "RecoveryStore": "._store",
    "RedisStore": "._redis",
    "TENANT_RE": "._redis",
    "safe_url": "._redis",
}


__getattr__ = LazyFace(__name__, _LAZY, globals())
