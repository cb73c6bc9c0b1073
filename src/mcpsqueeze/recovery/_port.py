"""The store port: what every place that keeps originals (memory, files, Redis) implements. An adapter keeps
originals of one tenant *space* at a time and never answers one space with another's; content addressing
never crosses spaces. The stages see only the composite (`_store.RecoveryStore`) and ask it what it can do
(`remote`, `cannot_hold`), never which adapters it holds.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Protocol

__all__ = ["DEFAULT", "LocalLayer", "Space", "StoreLayer"]


@dataclass(frozen=True)
class Space:
    """Whose originals: a tenant, and `isolated` when one process serves several tenants (then the local
    layers key by a per-tenant derivation of the id, so no tenant can load another's local original)."""

    tenant: str = "default"
    isolated: bool = False

    def local(self, response_id: str) -> str:
        """The id the local layers use: the response id itself, or a per-tenant derivation of it."""
        if not self.isolated:
            return response_id
        return hashlib.blake2b(f"{self.tenant}\0{response_id}".encode(), digest_size=16).hexdigest()

    def content_key(self, digest: str) -> str:
        """A digest of an original as this space's content address: equal only within one tenant."""
        return f"{self.tenant}\0{digest}"


DEFAULT = Space()


class StoreLayer(Protocol):
    """One place originals are kept (memory, files, Redis: each adapter implements this itself). Every
    method does its work or raises RecoveryError; `space` is whose original it is."""

    #: Over the network (Redis): a call may take milliseconds, so it runs in a worker; and it is the
    #: place every replica reads, so an original it refuses is not stored at all (it passes unshrunk).
    remote: bool

    def put(
        self, response_id: str, original: bytes, *, space: Space = DEFAULT, digest: str = ""
    ) -> str | None:
        """Keep `original` (whose sha256 is `digest`); the file that holds it, when there is one."""
        ...

    def alias(self, response_id: str, earlier_id: str, *, space: Space = DEFAULT) -> str | None:
        """Make `response_id` stand for the identical original kept under `earlier_id` (same space);
        the file that holds the bytes, when there is one. RecoveryError when the earlier one is gone."""
        ...

    def get(self, response_id: str, *, space: Space = DEFAULT) -> bytes:
        """The original kept under `response_id`, or RecoveryError saying why there is none."""
        ...

    def first_seen(self, scope: str, digest: str, record: bytes, *, space: Space = DEFAULT) -> bytes | None:
        """The dedup index shared by replicas: the record kept when `digest` was first seen in
        (space, scope), else None (and `record` is kept). None from a layer that keeps no such index."""
        ...

    def remember_call(self, scope: str, call: str, record: bytes, *, space: Space = DEFAULT) -> None:
        """The record of calls shared by replicas: `record` (what the last `call` of (space, scope)
        showed) replaces the one kept before. A layer that keeps no such record does nothing."""
        ...

    def last_call(self, scope: str, call: str, *, space: Space = DEFAULT) -> bytes | None:
        """The record `remember_call` last kept for `call` in (space, scope), else None (and always None
        from a layer that keeps no such record)."""
        ...

    def where(self, response_id: str, *, space: Space = DEFAULT) -> str | None:
        """Where `response_id`'s original would be readable as a file (a preview names it), else None."""
        ...

    def capacity(self) -> int | None:
        """The largest original this layer can take; None: no fixed bound."""
        ...


class LocalLayer:
    """A layer of one process (memory, files): it keeps no dedup index or record of calls shared by
    replicas, so it answers None and keeps nothing."""

    def first_seen(self, scope: str, digest: str, record: bytes, *, space: Space = DEFAULT) -> bytes | None:
        return None

    def remember_call(self, scope: str, call: str, record: bytes, *, space: Space = DEFAULT) -> None:
        return None

    def last_call(self, scope: str, call: str, *, space: Space = DEFAULT) -> bytes | None:
        return None
