"""``condense``: the copy of a JSON document that keeps the most within a character target.

Two condensers: the priced packing (every string and item decides for itself, at a price per
character), and the limit search (one set of limits for the whole document), which is the fallback.
"""

from __future__ import annotations

from mcpsqueeze.shrink._copy import Condensed, Plans
from mcpsqueeze.shrink._limits import limit_search
from mcpsqueeze.shrink._priced import priced

__all__ = ["condense"]

#: The head kept by strings the priced packing cuts (short heads keep the most values).
_HEAD = 8


def _run(name: str, root: object, target: int, plans: Plans) -> Condensed | None:
    if name == "limits":
        return limit_search(root, target, plans)
    copy = priced(root, target, _HEAD, plans)
    if copy is not None:
        copy.strategy = name
    return copy


def condense(root: object, target: int, plans: Plans | None = None) -> Condensed | None:
    """The best copy of ``root`` within ``target`` serialized characters, or None when not even the
    smallest copy fits. ``plans`` carries what was learnt to a retry at a slightly different target.

    The priced packing goes first; the limit search when the document is not a container or the
    priced packing found no copy (the items that must stay did not fit: the limit search can still
    drop keys and collapse levels).
    """
    if plans is None:
        plans = Plans()
    if plans.winner is not None:  # a retry: only what won before
        copy = _run(plans.winner, root, target, plans)
        if copy is not None:
            return copy
    for name in ("priced", "limits") if type(root) is dict or type(root) is list else ("limits",):
        copy = _run(name, root, target, plans)
        if copy is not None:
            plans.winner = name
            return copy
    return None
