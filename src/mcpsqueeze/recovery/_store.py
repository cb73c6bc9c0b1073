"""The recovery store the pipeline uses: the port's adapters layered, read in order (memory, files, Redis).
The shared (Redis) layer is written first: an original it refuses is stored nowhere (the result passes
unshrunk), and memory and files are caches in front of it.
"""

from __future__ import annotations

import contextlib
import copy
import hashlib
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING

from .._errors import RecoveryError
from ._files import FileStore
from ._memory import MemoryCache
from ._port import Space, StoreLayer

if TYPE_CHECKING:
    from ._redis import RedisStore

__all__ = ["RecoveryStore"]

logger = logging.getLogger(__name__)


class RecoveryStore:
    """Stores each original before its preview is shown; one stored nowhere is never previewed. An original
    identical to one the same tenant stored before is kept once in each local layer (the later id shares
    the bytes; its file is an alias record), never across tenants (`scoped`). Only the shared store keeps
    the dedup index and the record of calls replicas share: they are asked only of a `remote` store."""

    def __init__(
        self, memory: MemoryCache | None, files: FileStore | None, shared: RedisStore | None = None
    ) -> None:
        self.memory = memory  # (the adapters' own objects, for tests and tools that inspect them)
        self.files = files
        self.shared = shared
        self._local: list[StoreLayer] = [layer for layer in (memory, files) if layer is not None]
        self.space = Space()
        self.on_get: Callable[[str, int], None] | None = None  # each original read back (stats, metrics)

    @property
    def tenant(self) -> str:
        return self.space.tenant

    @property
    def remote(self) -> bool:
        """A layer is over the network: store and index calls belong in a worker, never on the loop."""
        return self.shared is not None

    def scoped(self, tenant: str, *, isolate: bool = False) -> RecoveryStore:
        """This store as one tenant sees it. `isolate` (a process serving several tenants) also keys the
        local memory and files by tenant, so no tenant can load another's original from this replica."""
        view = copy.copy(self)
        view.space = Space(tenant, isolate)
        return view

    def first_seen(self, scope: str, digest: str, record: bytes) -> bytes | None:
        """The shared dedup index (None when `digest` is new for this tenant and scope)."""
        assert self.shared is not None
        return self.shared.first_seen(scope, digest, record, space=self.space)

    def remember_call(self, scope: str, call: str, record: bytes) -> None:
        """Keep `record` as what the last `call` of this tenant's `scope` showed, for every replica.
        RecoveryError when it could not."""
        assert self.shared is not None
        self.shared.remember_call(scope, call, record, space=self.space)

    def last_call(self, scope: str, call: str) -> bytes | None:
        """The record the shared store keeps for `call` in this tenant's `scope` (None without one)."""
        assert self.shared is not None
        return self.shared.last_call(scope, call, space=self.space)

    def planned_file(self, response_id: str) -> str | None:
        return None if self.files is None else str(self.files.path_for(self.space.local(response_id)))

    def cannot_hold(self, at_least: int) -> str | None:
        """Why an original of at least ``at_least`` bytes would be stored nowhere, before it is built (so a
        result that is to pass unshrunk anyway is not condensed first); None when it may be stored: only
        the memory cache has a fixed bound."""
        if self.memory is None or self.files is not None or self.shared is not None:
            return None
        largest = self.memory.max_bytes
        if at_least <= largest:
            return None
        return f"{at_least} bytes or more exceed the memory cache limit ({largest} bytes)"

    def put(self, response_id: str, original: bytes) -> str | None:
        """Blocking (run it in a worker): the file that holds the original, when one does. RecoveryError
        when it was stored nowhere: also when the shared store refuses it (every replica reads that one),
        before any local layer is written."""
        digest = hashlib.sha256(original).hexdigest()
        if self.shared is not None:
            self.shared.put(response_id, original, space=self.space, digest=digest)
        errors: list[str] = []
        kept = self.shared is not None
        file: str | None = None
        for layer in self._local:
            try:
                where = layer.put(response_id, original, space=self.space, digest=digest)
            except RecoveryError as exc:
                errors.append(str(exc))
                if layer is self.files:
                    logger.warning(f"mcpsqueeze: could not store an original: {exc}")
                continue
            kept = True
            file = file if file is not None else where
        if not kept:
            raise RecoveryError("; ".join(errors) or "no recovery store accepted the original")
        return file

    def get(self, response_id: str) -> bytes:
        """Memory first, then the file, then the shared store; the clearest error when none has it:
        the shared store's (it speaks for every replica), else the first local layer's (memory says why
        an original left: expired, evicted)."""
        error: RecoveryError | None = None
        for layer in (*self._local, *([] if self.shared is None else [self.shared])):
            try:
                original = layer.get(response_id, space=self.space)
            except RecoveryError as exc:
                if error is None or layer is self.shared:
                    error = exc
                continue
            if self.on_get is not None:
                with contextlib.suppress(RuntimeError):  # accounting already closed: the recovery works
                    self.on_get(response_id, len(original))
            return original
        assert error is not None
        raise error
