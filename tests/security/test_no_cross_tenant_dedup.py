"""Tenants are never deduplicated against each other in local storage.

An original stored as an alias of another tenant's byte-identical file (and a truncation record naming
that file) would tell one tenant what another had fetched; each tenant's repeated originals are
content-addressed among its own only.
"""

from __future__ import annotations

from pathlib import Path

from mcpsqueeze.accounting._stats import Accountant
from mcpsqueeze.core._services import SessionServices, for_caller
from mcpsqueeze.core._stages import Workers
from mcpsqueeze.recovery import FileStore, MemoryCache, RecoveryStore, new_response_id
from mcpsqueeze.recovery._ids import alias_target

ORIGINAL = b'{"content":[{"type":"text","text":"the same data, fetched by both tenants"}]}'


def _tenants(tmp_path: Path) -> tuple[RecoveryStore, RecoveryStore, MemoryCache]:
    memory = MemoryCache()
    store = RecoveryStore(memory, FileStore(tmp_path / "rec"))
    services = SessionServices(Accountant(None), store.scoped("default"), Workers(1), "backend")
    alice, bob = (for_caller(services, name, named=True).store for name in ("alice", "bob"))
    assert alice is not None and bob is not None
    return alice, bob, memory


def test_a_tenants_original_is_never_an_alias_of_another_tenants_file(tmp_path: Path) -> None:
    alice, bob, _ = _tenants(tmp_path)
    a, b = new_response_id(), new_response_id()
    file_a = alice.put(a, ORIGINAL)
    file_b = bob.put(b, ORIGINAL)
    assert file_a is not None and file_b is not None
    assert file_b != file_a  # B's record names B's own file
    assert alias_target(Path(file_b).read_bytes()) is None  # held in full, not an alias of A's
    assert Path(file_b).read_bytes() == ORIGINAL
    assert bob.get(b) == ORIGINAL and alice.get(a) == ORIGINAL


def test_one_tenants_repeats_are_still_stored_once(tmp_path: Path) -> None:
    alice, _, _ = _tenants(tmp_path)
    a1, a2 = new_response_id(), new_response_id()
    first = alice.put(a1, ORIGINAL)
    second = alice.put(a2, ORIGINAL)
    assert second == first  # within one tenant: content-addressed as before
    assert alice.get(a2) == ORIGINAL


def test_tenants_never_share_a_memory_copy(tmp_path: Path) -> None:
    alice, bob, memory = _tenants(tmp_path)
    alice.put(new_response_id(), ORIGINAL)
    bob.put(new_response_id(), ORIGINAL)
    assert memory.total_bytes == 2 * len(ORIGINAL)  # one copy each: no tenant's bytes stand for another's


def test_no_stage_asks_which_layers_the_store_holds() -> None:
    """The stages see the store port's composite, never `store.shared`."""
    src = Path(__file__).resolve().parents[2] / "src" / "mcpsqueeze"
    offenders = [
        f"{path.relative_to(src)}:{n}"
        for path in src.rglob("*.py")
        for n, line in enumerate(path.read_text().splitlines(), 1)
        if "store.shared" in line or "_store.shared" in line
    ]
    assert offenders == []
