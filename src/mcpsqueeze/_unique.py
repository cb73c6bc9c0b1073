"""Names made distinct: ``_2``, ``_3`` ... added, in order, where two names are the same (Code Mode's
identifiers, a Client's function names). Pure, no imports."""

from __future__ import annotations

__all__ = ["unique"]


def unique(names: list[str], taken: set[str] | None = None) -> list[str]:
    """The same names, with `_2`, `_3` ... added where two map to one identifier (or to one of ``taken``)."""
    seen = set(taken or ())
    out = []
    for name in names:
        candidate, n = name, 1
        while candidate in seen:
            n += 1
            candidate = f"{name}_{n}"
        seen.add(candidate)
        out.append(candidate)
    return out
