"""The bounded in-memory store of originals, the first place recovery looks: bounded by age, count and bytes;
ids that were dropped are remembered for a while, so a late request hears why the original is gone. Ids of
identical originals share one copy (the byte bound counts it once). Big originals are compressed (zlib
level 1) in a background thread; the bound counts the bytes actually held.
"""

from __future__ import annotations

import threading
import time
import zlib
from collections import OrderedDict, deque
from collections.abc import Callable
from dataclasses import dataclass

from mcpsqueeze._errors import RecoveryError

from ._ids import bad_id_message, is_response_id, require_response_id
from ._port import DEFAULT, Space

__all__ = ["MemoryCache"]

_TOMBSTONES = 1024
_PACK_FROM = 64 * 1024  # bytes: smaller originals stay raw (compressing them would save little)
_PACK_LEVEL = 1  # zlib's fastest: ~6 ms per MB here, in a thread (zlib releases the GIL)


@dataclass(frozen=True, slots=True)
class _Entry:
    key: str  # the blob this id shows: its content key, or the id itself when none was given
    stored_at: float


@dataclass(slots=True)
class _Blob:
    original: bytes  # zlib-compressed when `packed`
    refs: int
    packed: bool = False


class MemoryCache:
    """Thread-safe LRU of recent originals, keyed by response id."""

    def __init__(
        self,
        ttl: float = 300.0,
        max_entries: int = 32,
        max_bytes: int = 32 * 1024 * 1024,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.ttl = ttl
        self.max_entries = max_entries
        self.max_bytes = max_bytes
        self._clock = clock
        self._lock = threading.Lock()
        self._entries: OrderedDict[str, _Entry] = OrderedDict()
        self._blobs: dict[str, _Blob] = {}
        self._bytes = 0
        # id -> reason it left; bounded so that a long session cannot grow it without limit.
        self._gone: OrderedDict[str, str] = OrderedDict()
        self._to_pack: deque[_Blob] = deque()  # big raw blobs, compressed by `_pack_loop`
        self._packer: threading.Thread | None = None
        self._wake = threading.Event()

    def put(
        self,
        response_id: str,
        original: bytes | bytearray | memoryview,
        *,
        space: Space = DEFAULT,
        digest: str = "",
    ) -> str | None:
        """Store an original; RecoveryError when it alone is larger than the whole cache. Originals with the
        same `digest` (in one space) share one copy; one that is not exact `bytes` is copied to exact size
        first (the bound is real memory)."""
        require_response_id(response_id, ValueError)
        response_id = space.local(response_id)
        key = "=" + space.content_key(digest) if digest else response_id  # "=": never equals an id
        # An exact-size copy even of `bytes`: orjson's output reserves several times its length (a 650 KB
        # result held an 8 MB allocation), which a bound by `len` would not see.
        kept = memoryview(original).tobytes() if len(original) < _PACK_FROM else bytes(original)
        with self._lock:
            self._drop(response_id, None)
            cost = len(kept)  # exact-size `bytes`: no view or spare buffer pins more than the bound counts
            if cost > self.max_bytes:
                self._remember(response_id, "too_big")
                raise RecoveryError(f"{len(original)} bytes exceed the memory cache limit")
            self._expire(self._clock())
            while self._entries and (
                len(self._entries) >= self.max_entries
                or self._bytes + (0 if key in self._blobs else cost) > self.max_bytes
            ):
                oldest = next(iter(self._entries))
                self._drop(oldest, "evicted" if len(self._entries) >= self.max_entries else "evicted_bytes")
            blob = self._blobs.get(key)
            if blob is None:
                blob = self._blobs[key] = _Blob(kept, 0)
                self._bytes += cost
                if cost >= _PACK_FROM:
                    self._to_pack.append(blob)
                    self._wake.set()
                    if self._packer is None:
                        self._packer = threading.Thread(
                            target=self._pack_loop, name="mcpsqueeze-cache-pack", daemon=True
                        )
                        self._packer.start()
            blob.refs += 1
            self._entries[response_id] = _Entry(key, self._clock())
            self._gone.pop(response_id, None)
            return None

    def get(self, response_id: str, *, space: Space = DEFAULT) -> bytes:
        """Return the original, or raise RecoveryError saying why it is not here."""
        response_id = space.local(response_id)
        with self._lock:
            now = self._clock()
            entry = self._entries.get(response_id)
            if entry is not None and now - entry.stored_at >= self.ttl:
                self._drop(response_id, "expired")
                entry = None
            if entry is not None:
                self._entries.move_to_end(response_id)
                blob = self._blobs[entry.key]
                held, packed = blob.original, blob.packed
            else:
                reason = self._gone.get(response_id)
        if entry is not None:
            return zlib.decompress(held) if packed else held
        raise RecoveryError(self._message(response_id, reason))

    def _pack_loop(self) -> None:
        """Compress big originals one at a time, outside the lock; one that left meanwhile is skipped."""
        while True:
            with self._lock:
                blob = self._to_pack.popleft() if self._to_pack else None
            if blob is None:
                self._wake.wait()
                self._wake.clear()
                continue
            raw = blob.original
            packed = zlib.compress(raw, _PACK_LEVEL)
            with self._lock:
                if blob.packed or blob.refs == 0 or blob.original is not raw or len(packed) >= len(raw):
                    continue  # gone, or incompressible: keep it as it is
                blob.original, blob.packed = packed, True
                self._bytes -= len(raw) - len(packed)
            del raw

    def __len__(self) -> int:
        with self._lock:
            self._expire(self._clock())
            return len(self._entries)

    @property
    def total_bytes(self) -> int:
        """Bytes held by entries that have not expired (a shared original counts once)."""
        with self._lock:
            self._expire(self._clock())
            return self._bytes

    def _expire(self, now: float) -> None:
        # Entries are in insertion order except for LRU moves, so scan them all; there are few.
        for key in [k for k, e in self._entries.items() if now - e.stored_at >= self.ttl]:
            self._drop(key, "expired")

    def _drop(self, response_id: str, reason: str | None) -> None:
        entry = self._entries.pop(response_id, None)
        if entry is not None:
            blob = self._blobs[entry.key]
            blob.refs -= 1
            if blob.refs == 0:
                del self._blobs[entry.key]
                self._bytes -= len(blob.original)  # (what it holds now: compressed or not)
            if reason is not None:
                self._remember(response_id, reason)

    def _remember(self, response_id: str, reason: str) -> None:
        self._gone[response_id] = reason
        self._gone.move_to_end(response_id)
        while len(self._gone) > _TOMBSTONES:
            self._gone.popitem(last=False)

    def _message(self, response_id: str, reason: str | None) -> str:
        # Door-neutral: the MCP proxy, the shim and the Python API all show this text.
        fallback = (
            "If the truncation record names an original_response_file, that file still holds it; "
            "otherwise call the tool again."
        )
        if not is_response_id(response_id):
            return bad_id_message(response_id)
        if reason == "expired":
            return (
                f"Response {response_id} expired after {self.ttl:g} s; its original is no longer "
                f"in memory. {fallback}"
            )
        if reason in ("evicted", "evicted_bytes"):
            bound = (
                f"it keeps at most {self.max_entries} results (cache_entries, --cache-entries)"
                if reason == "evicted"
                else f"it keeps at most {self.max_bytes} bytes (cache_bytes, --cache-bytes)"
            )
            return (
                f"Response {response_id} was evicted from memory to make room for newer results: {bound}; "
                f"raise that bound to keep more. {fallback}"
            )
        if reason == "too_big":
            return (
                f"Response {response_id} was too large to keep in memory "
                f"(more than {self.max_bytes} bytes). {fallback}"
            )
        return (
            f"Unknown response id {response_id}: this proxy holds no such response in memory "
            f"(it may come from another session or a restarted proxy). {fallback}"
        )
