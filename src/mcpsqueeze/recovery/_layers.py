"""The store port's adapters: the memory cache, the file store and Redis, each as a `StoreLayer`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from mcpsqueeze._errors import RecoveryError

from ._files import FileStore
from ._memory import MemoryCache
from ._port import Space

if TYPE_CHECKING:
    from ._redis import RedisStore

__all__ = ["FileLayer", "MemoryLayer", "SharedLayer"]


class MemoryLayer:
    """Originals in this process's bounded memory cache (identical ones of one space share a copy)."""

    remote = False

    def __init__(self, cache: MemoryCache) -> None:
        self.cache = cache

    def put(self, space: Space, response_id: str, original: bytes, digest: str) -> str | None:
        if not self.cache.put(space.local(response_id), original, key=space.content_key(digest)):
            raise RecoveryError(f"{len(original)} bytes exceed the memory cache limit")
        return None

    def alias(self, space: Space, response_id: str, earlier_id: str) -> str | None:
        self.cache.alias(space.local(response_id), space.local(earlier_id))
        return None

    def get(self, space: Space, response_id: str) -> bytes:
        return self.cache.get(space.local(response_id))

    def first_seen(self, space: Space, scope: str, digest: str, record: bytes) -> bytes | None:
        return None

    def where(self, space: Space, response_id: str) -> str | None:
        return None

    def capacity(self) -> int | None:
        return self.cache.max_bytes


class FileLayer:
    """Originals in private files (a repeated one of the same space is an alias record of the first)."""

    remote = False

    def __init__(self, files: FileStore) -> None:
        self.files = files

    def put(self, space: Space, response_id: str, original: bytes, digest: str) -> str | None:
        return str(self.files.write(space.local(response_id), original))

    def alias(self, space: Space, response_id: str, earlier_id: str) -> str | None:
        return str(self.files.alias(space.local(response_id), space.local(earlier_id)))

    def get(self, space: Space, response_id: str) -> bytes:
        return self.files.read(space.local(response_id))

    def first_seen(self, space: Space, scope: str, digest: str, record: bytes) -> bytes | None:
        return None

    def where(self, space: Space, response_id: str) -> str | None:
        return str(self.files.path_for(space.local(response_id)))

    def capacity(self) -> int | None:
        return None


class SharedLayer:
    """Originals in Redis, every key carrying the tenant; and the dedup index replicas share."""

    remote = True

    def __init__(self, redis: RedisStore) -> None:
        self.redis = redis

    def put(self, space: Space, response_id: str, original: bytes, digest: str) -> str | None:
        self.redis.put(space.tenant, response_id, original)
        return None

    def alias(self, space: Space, response_id: str, earlier_id: str) -> str | None:
        raise RecoveryError("the shared store keeps every id's original in full")

    def get(self, space: Space, response_id: str) -> bytes:
        return self.redis.get(space.tenant, response_id)

    def first_seen(self, space: Space, scope: str, digest: str, record: bytes) -> bytes | None:
        return self.redis.first_seen(space.tenant, scope, digest, record)

    def where(self, space: Space, response_id: str) -> str | None:
        return None

    def capacity(self) -> int | None:
        return None
