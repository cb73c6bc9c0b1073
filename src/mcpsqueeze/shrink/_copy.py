"""What both condensers share: the condensed copy they return, and the sizes and markers they use.

Sizes are of compact JSON as ``dumps_text`` writes it, so that a copy's size is known while it is built.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, KeysView
from dataclasses import dataclass, field
from typing import Final

from mcpsqueeze._jsonbytes import dumps_text

MAX_DEPTH: Final = 48  # deepest level the condensers descend into; deeper containers are collapsed
STRING_SLACK: Final = 16  # a string is only cut when that saves at least a marker's width
UNLIMITED: Final = 1 << 62
MAX_DROPPED: Final = 64  # the most field names a report lists as dropped (it counts them all)


@dataclass(frozen=True, slots=True)
class Limits:
    """One set of limits for a whole document, as the limit search (``_limits``) tries them; here
    because a condensed copy records the limits it was made under."""

    strings: int  # strings longer than this (plus a marker's width) are cut to this many chars
    items: int  # arrays longer than this keep this many items
    keys: int  # nested objects with more keys keep this many
    depth: int  # containers at this depth are collapsed into a marker
    share: bool = False  # ``items`` is per mille of each array instead of a count
    bonus: int = 0  # this many sampled arrays (in document order) keep one item more


@dataclass(slots=True)
class Condensed:
    value: object
    intact: int = 0
    items_omitted: int = 0
    keys_omitted: int = 0
    strings_truncated: int = 0
    dropped: dict[str, None] = field(default_factory=dict)
    strategy: str = ""
    size: int = 0  # estimated serialized size; the caller measures the real one
    longest_list: int = 0  # longest array / string the trial visited, to stop searching early
    longest_string: int = 0
    uneven: bool = False  # the arrays sampled differ in length (so per-array shares may do better)
    limits: Limits | None = None


@dataclass(slots=True)
class Plans:
    """What condensing one document learns, kept across attempts at slightly different targets; and
    the call's own words (``terms``), which rank array items up."""

    # id(array) -> its ``priority`` order and the field names below it (arrays stay alive as long as
    # the document does)
    orders: dict[int, tuple[list[int], set[str]]] = field(default_factory=dict)
    limits: Limits | None = None  # the limits that won the limit search
    priced: object = None  # the document compiled for the priced packing (``_priced.Priced``)
    winner: Callable[[object, int, Plans], Condensed | None] | None = None  # the condenser that won
    terms: tuple[str, ...] = ()  # the call's own words (``query_terms``)
    pins: dict[int, list[int]] = field(default_factory=dict)  # id(array) -> its pinned items (``_unusual``)

    def names(self, root: object) -> set[str]:
        """``deep_keys(root)``, taking the names of an array of over 64 items from its ``priority`` pass,
        which finds them anyway, instead of walking it a second time."""
        keys: set[str] = set()
        stack = [root]
        while stack:
            node = stack.pop()
            if type(node) is dict:
                keys.update(node)
                stack.extend(containers(node.values()))
            elif len(node) > 64:  # type: ignore[arg-type]
                keys |= self.ordered(node)[1]  # type: ignore[arg-type]
            else:
                stack.extend(containers(node))  # type: ignore[arg-type]
        return keys

    def ordered(self, node: list[object]) -> tuple[list[int], set[str]]:
        """``priority(node)``, worked out once per array."""
        found = self.orders.get(id(node))
        if found is None:
            found = self.orders[id(node)] = priority(node)
        return found


CONTAINER_TYPES: Final = frozenset((dict, list))


def containers(children: Iterable[object]) -> list[object]:
    if CONTAINER_TYPES.isdisjoint(map(type, children)):  # C speed over the leaves; most nodes hold none
        return []
    return [c for c in children if type(c) is dict or type(c) is list]


def deep_keys(root: object) -> set[str]:
    keys: set[str] = set()
    stack = [root]
    pop, extend = stack.pop, stack.extend
    while stack:
        node = pop()
        if type(node) is dict:
            keys.update(node)
            extend(containers(node.values()))
        else:
            extend(containers(node))  # type: ignore[arg-type]
    return keys


def priority(items: list[object]) -> tuple[list[int], set[str]]:
    """Indexes of ``items`` in the order they are worth keeping, and every field name below them.

    First and last; then each item that shows a field name not yet shown; then one item of every
    distinct shape; then the rest from the head. (An item is only searched for names when it may
    hold one not seen yet, so the names come almost for free.)
    """
    n = len(items)
    order = [0, n - 1] if n > 1 else [0]
    covered: set[str] = set()
    shapes: set[object] = set()
    for i in order:
        item = items[i]
        if type(item) is dict or type(item) is list:
            covered |= deep_keys(item)
        shapes.add(frozenset(item) if type(item) is dict else type(item))
    cover: list[int] = []
    distinct: list[int] = []
    last: KeysView[str] | None = None  # the field names of the last object met: shape known, covered
    for i in range(1, n - 1):
        item = items[i]
        if type(item) is dict:
            names = item.keys()
            if last is not None and names == last:  # (most records have the fields of the one before)
                new_shape, known = False, True
            else:
                shape: object = frozenset(item)
                new_shape = shape not in shapes
                if new_shape:
                    shapes.add(shape)
                known = covered.issuperset(item)
            last = names  # (whichever way below, its names are covered after this item)
            if known and (
                CONTAINER_TYPES.isdisjoint(map(type, item.values()))
                or all(type(inner) is list and not containers(inner) for inner in containers(item.values()))
            ):  # no field name below the item's own
                if new_shape:
                    distinct.append(i)
                continue
        elif type(item) is list:
            new_shape = list not in shapes
            shapes.add(list)
        else:
            if type(item) not in shapes:
                shapes.add(type(item))
                distinct.append(i)
            continue
        keys = deep_keys(item)
        if not covered.issuperset(keys):
            covered |= keys
            cover.append(i)
        elif new_shape:
            distinct.append(i)
    chosen = set(order)
    chosen.update(cover)
    chosen.update(distinct)
    order.extend(cover)
    order.extend(distinct)
    if len(chosen) < n:
        order.extend(i for i in range(1, n - 1) if i not in chosen)
    return order, covered


def leaf_size(value: object) -> int:
    if value is None or value is True:
        return 4
    if value is False:
        return 5
    if type(value) is float:
        return len(repr(value))  # as ``dumps_text`` writes it
    return len(str(value))


def str_size(text: str) -> int:
    if text.isprintable():
        return len(text) + 2 + text.count('"') + text.count("\\")
    return len(dumps_text(text))  # control characters and lone surrogates: measure the real escapes


def gap_text(first: int, last: int) -> str:
    return f"…[#{first}-{last} omitted]" if last > first else f"…[#{first} omitted]"


def gap_size(first: int, last: int) -> int:
    """Serialized size of the gap marker for items ``first..last`` (0 when the gap is empty):
    ``len(gap_text(first, last)) + 2``, counted without writing it (the packing asks this often)."""
    if last > first:
        return 15 + len(str(first)) + len(str(last))  # '"…[#' first '-' last ' omitted]"'
    return 14 + len(str(first)) if last == first else 0


def collapsed_keys(n: int) -> str:
    """What stands for an object of ``n`` keys nested deeper than the condensers descend."""
    return f"{{…{n} keys}}"


def collapsed_items(n: int) -> str:
    """What stands for an array of ``n`` items nested deeper than the condensers descend."""
    return f"[…{n} items]"


def note_dropped(dropped: dict[str, None], names: Iterable[str]) -> None:
    """Add ``names`` to a report's dropped field names, up to ``MAX_DROPPED``."""
    for name in names:
        if len(dropped) >= MAX_DROPPED:
            break
        dropped[name] = None


def cut(text: str, head: int) -> str:
    return f"{text[:head]}…[+{len(text) - head}]"


def cut_size(text: str, head: int) -> int:
    """``str_size(cut(text, head))`` without building the cut string: escapes are per character, and
    the marker (``…[+N]``) needs none."""
    return str_size(text[:head]) + 4 + len(str(len(text) - head))
