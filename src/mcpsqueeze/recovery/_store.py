"""The recovery store the pipeline uses: memory cache and/or file store behind one small facade."""

from __future__ import annotations

import copy
import hashlib
import json
import logging
import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .._errors import RecoveryError, UsageError
from .._jsonbytes import loads
from .._results import text_of
from ._files import FileStore
from ._ids import is_response_id
from ._lines import read_lines
from ._memory import MemoryCache
from ._pointer import read_window, resolve_pointer

if TYPE_CHECKING:
    from ._redis import RedisStore

__all__ = ["RecoveryStore", "Stored", "recover_call", "recover_result"]

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


def recover_result(
    original_bytes: bytes,
    pointer: str | None = None,
    offset: int | None = None,
    length: int | None = None,
    lines: str | None = None,
    *,
    query: str | None = None,
) -> dict[str, Any]:
    """The CallToolResult that `squeeze_recover` returns: the original, one JSON node, a JMESPath
    projection (of the node, when both are given), a text window of any of these, or a range of its
    lines (numbered as the preview's fold markers number them)."""
    if lines is not None and (offset is not None or length is not None):
        raise UsageError("give either lines or offset/length, not both")
    try:
        original = loads(original_bytes) if original_bytes else {}
    except (ValueError, RecursionError) as exc:
        raise RecoveryError(
            f"the stored original is not valid JSON ({exc}); it may have been altered"
        ) from exc
    if pointer is None and offset is None and length is None and lines is None and query is None:
        return {"content": original.get("content", []), "isError": False}
    text = text_of(original)
    if pointer is not None or query is not None:
        try:
            document = json.loads(text)
        except ValueError:
            if "structuredContent" not in original:
                raise RecoveryError(
                    f"the original is not JSON, so a {'pointer' if pointer is not None else 'query'} cannot "
                    "select a part of it; use offset/length to read a window of its text instead"
                ) from None
            document = original["structuredContent"]
        node = resolve_pointer(document, pointer) if pointer is not None else document
        if query is not None:
            from ..projection import project

            node = project(node, query)
        text = node if isinstance(node, str) else json.dumps(node, ensure_ascii=False, indent=1)
    if lines is not None:
        chosen, first, last, total_lines = read_lines(text, lines)
        return {
            "content": [{"type": "text", "text": chosen}],
            "isError": False,
            "_meta": {"mcpsqueeze/lines": {"first": first, "last": last, "total_lines": total_lines}},
        }
    window, total = read_window(text, offset or 0, length)
    start = offset or 0
    # The window is the exact text (so windows concatenate back to the original); its place is in _meta.
    return {
        "content": [{"type": "text", "text": window}],
        "isError": False,
        "_meta": {"mcpsqueeze/window": {"offset": start, "length": len(window), "total_chars": total}},
    }


def recover_call(store: RecoveryStore | None, arguments: object) -> dict[str, Any]:
    """The recover tool's answer to its ``arguments``, for every door that offers the tool (the MCP
    proxy and the Python API): check them, load the original (never re-running a tool), render it.

    Raises UsageError for malformed arguments and RecoveryError when the original is not available."""
    if store is None:
        raise RecoveryError("this proxy keeps no originals (--no-shrink and --no-dedup)")
    if not isinstance(arguments, dict):
        raise UsageError("arguments must be an object with response_id")
    response_id = arguments.get("response_id")
    if not is_response_id(response_id):
        raise UsageError("response_id must be the 32 hex characters shown in the truncation notice")
    pointer = arguments.get("pointer")
    offset = arguments.get("offset")
    length = arguments.get("length")
    if pointer is not None and not isinstance(pointer, str):
        raise UsageError("pointer must be a string such as /issues/17")
    query = arguments.get("query")
    if query is not None:
        from ..projection import compile_query

        compile_query(query)  # a malformed expression is a usage error before anything is loaded
    for name, value in (("offset", offset), ("length", length)):
        if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value < 0):
            raise UsageError(f"{name} must be a non-negative integer")
    lines = arguments.get("lines")
    if lines is not None and not isinstance(lines, str):
        raise UsageError("lines must be a string such as 120-180")
    return recover_result(store.load(response_id), pointer, offset, length, lines, query=query)
