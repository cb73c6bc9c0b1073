"""The store port: what every place that keeps originals (memory, files, Redis) implements. An adapter keeps
originals of one tenant *space* at a time and never answers one space with another's; content addressing
never crosses spaces. The stages see only the composite (`_store.RecoveryStore`) and ask it what it can do
(`remote`, `cannot_hold`), never which adapters it holds.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Protocol

__all__ = ["DEFAULT", "Space", "StoreLayer"]


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
    """One place that keeps originals (memory, files, Redis: each adapter implements this itself). Every
    method does its work or raises RecoveryError; `space` is whose original it is. An original identical
    to one stored before in the same space (the same `digest`) may share its bytes (memory, files)."""

    def put(
        self, response_id: str, original: bytes, *, space: Space = DEFAULT, digest: str = ""
    ) -> str | None:
        """Keep `original` (whose sha256 is `digest`); the file that holds it, when there is one."""
        ...

    def get(self, response_id: str, *, space: Space = DEFAULT) -> bytes:
        """The original kept under `response_id`, or RecoveryError saying why there is none."""
        ...
