"""The recovery store the pipeline uses: memory cache and/or file store behind one small facade."""

from __future__ import annotations

import copy
import hashlib
import logging
import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .._errors import RecoveryError
from ._files import FileStore
from ._memory import MemoryCache

if TYPE_CHECKING:
    from ._redis import RedisStore

__all__ = ["RecoveryStore", "Stored"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Stored:
    response_id: str
    file: str | None


_DIGESTS = 4096  # how many distinct stored originals a store remembers for content addressing


class RecoveryStore:
    """Stores each original before its preview is shown; an original stored nowhere is never previewed.

    Content-addressed: an original byte-identical to one stored before (a repeated result) is kept
    once; the later id shares the memory entry's bytes and its file is an alias record."""

    def __init__(
        self, memory: MemoryCache | None, files: FileStore | None, shared: RedisStore | None = None
    ) -> None:
        if memory is None and files is None and shared is None:
            raise ValueError("a recovery store needs memory, files, or both")
        self.memory = memory
        self.files = files
        # The shared store (Redis) is the one every replica reads: with it, an original it did not take
        # is not stored at all (the result passes unshrunk); memory and files are caches in front of it.
        self.shared = shared
        self.tenant = "default"
        self._isolated = False
        # Shared by every scoped view (intended: one process, one set of local files).
        self._lock = threading.Lock()
        self._written: OrderedDict[str, str] = OrderedDict()  # digest -> id whose file holds the bytes

    def scoped(self, tenant: str, *, isolate: bool = False) -> RecoveryStore:
        """This store as one tenant sees it. `isolate` (a process serving several tenants) also keys the
        local memory and files by tenant, so no tenant can load another's original from this replica."""
        view = copy.copy(self)
        view.tenant = tenant
        view._isolated = isolate
        return view

    def _local(self, response_id: str) -> str:
        """The id the local layers use: the response id itself, or a per-tenant derivation of it."""
        if not self._isolated:
            return response_id
        return hashlib.blake2b(f"{self.tenant}\0{response_id}".encode(), digest_size=16).hexdigest()

    def first_seen(self, scope: str, digest: str, record: bytes) -> bytes | None:
        """The shared dedup index (None without Redis, or when `digest` is new for this tenant and scope)."""
        if self.shared is None:
            return None
        return self.shared.first_seen(self.tenant, scope, digest, record)

    def _file_for(self, response_id: str, original: bytes, digest: str) -> str:
        assert self.files is not None
        with self._lock:
            earlier = self._written.get(digest)
        if earlier is not None:
            try:
                return str(self.files.alias(response_id, earlier))
            except RecoveryError:
                pass  # the earlier file is gone (retention): store this one in full
        path = str(self.files.write(response_id, original))
        with self._lock:
            self._written[digest] = response_id
            self._written.move_to_end(digest)
            while len(self._written) > _DIGESTS:
                self._written.popitem(last=False)
        return path

    def planned_file(self, response_id: str) -> str | None:
        return str(self.files.path_for(self._local(response_id))) if self.files is not None else None

    def cannot_hold(self, at_least: int) -> str | None:
        """Why an original of at least ``at_least`` bytes would be stored nowhere, before it is built (so a
        result that is to pass unshrunk anyway is not condensed first); None when it may be stored."""
        if self.files is not None or self.shared is not None or self.memory is None:
            return None
        if at_least <= self.memory.max_bytes:
            return None
        return f"{at_least} bytes or more exceed the memory cache limit ({self.memory.max_bytes} bytes)"

    def store(self, response_id: str, original: bytes) -> Stored:
        """Blocking (run it in a worker). Raises RecoveryError when the original was stored nowhere."""
        if self.shared is not None:
            self.shared.put(self.tenant, response_id, original)  # raises: nothing stored, pass unshrunk
        public, response_id = response_id, self._local(response_id)
        errors: list[str] = []
        in_memory = False
        digest = hashlib.sha256(original).hexdigest()
        if self.memory is not None:
            in_memory = self.memory.put(response_id, original, key=digest)
            if not in_memory:
                errors.append(f"{len(original)} bytes exceed the memory cache limit")
        file: str | None = None
        if self.files is not None:
            try:
                file = self._file_for(response_id, original, digest)
            except RecoveryError as exc:
                errors.append(str(exc))
                logger.warning(f"mcpsqueeze: could not store an original: {exc}")
        if not in_memory and file is None and self.shared is None:
            raise RecoveryError("; ".join(errors) or "no recovery store accepted the original")
        return Stored(public, file)

    def load(self, response_id: str) -> bytes:
        """Memory first, then the file, then the shared store; the clearest error when none has it."""
        if self.shared is None:
            return self._load_local(self._local(response_id))
        try:
            return self._load_local(self._local(response_id))
        except RecoveryError:
            return self.shared.get(self.tenant, response_id)

    def _load_local(self, response_id: str) -> bytes:
        if self.memory is None and self.files is None:
            raise RecoveryError(f"Unknown response id {response_id}")
        memory_error: RecoveryError | None = None
        if self.memory is not None:
            try:
                return self.memory.get(response_id)
            except RecoveryError as exc:
                memory_error = exc
        if self.files is not None:
            try:
                return self.files.read(response_id)
            except RecoveryError:
                if memory_error is None:
                    raise
        assert memory_error is not None
        raise memory_error
