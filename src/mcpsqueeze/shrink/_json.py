"""Strict JSON reading and writing, and the JSON condenser.

The condenser builds a smaller copy of a parsed document under a set of limits (per-string length,
per-array items, per-object keys, depth) and searches those limits for the copy that keeps the most
leaf values verbatim within a character target. Each trial copy is built with a running size
estimate and abandoned as soon as it is over the target, so a trial costs about as much as the
preview it would produce, not the document.
"""

from __future__ import annotations

import heapq
import json
import math
import re
from bisect import bisect_left, insort
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import Final

import orjson

__all__ = [
    "NOT_JSON",
    "Condensed",
    "JsonValue",
    "condense",
    "dumps",
    "parse_strict",
]

JsonValue = object

NOT_JSON: Final = object()

_SURROGATE = re.compile("[\ud800-\udfff]")
_MAX_DEPTH: Final = 48  # deepest level the condenser descends into; deeper containers are collapsed


def _reject_constant(name: str) -> object:
    raise ValueError(f"{name} is not JSON")


def _finite_float(text: str) -> float:
    value = float(text)
    if math.isinf(value):
        raise ValueError("number out of range")
    return value


def parse_strict(text: str) -> object:
    """The parsed value of ``text`` if it is one RFC 8259 JSON document, else ``NOT_JSON``.

    NaN/Infinity literals, numbers that overflow a double, and documents nested too deeply to walk
    all count as not JSON. Integers of any size are kept exactly (so the stdlib parser, whose C
    scanner is nearly as fast as orjson's, and which turns no big integer into a float).
    """
    stripped = text.strip(" \t\r\n")
    if not stripped or stripped[0] not in '{["-0123456789tfn':
        return NOT_JSON
    try:
        return json.loads(stripped, parse_constant=_reject_constant, parse_float=_finite_float)
    except (ValueError, RecursionError):
        return NOT_JSON


def _escape_surrogate(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"


def dumps(value: object) -> str:
    """Compact JSON text for ``value``; lone surrogates are written as ``\\uXXXX`` escapes."""
    try:
        return orjson.dumps(value).decode()
    except TypeError:
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
        return _SURROGATE.sub(_escape_surrogate, text)


# -- condensing ---------------------------------------------------------------------------------------


class _Overflow(Exception):
    """A trial copy grew past its target; the trial is abandoned."""


@dataclass(frozen=True, slots=True)
class Limits:
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


_STRING_SLACK: Final = 16  # a string is only cut when that saves at least a marker's width
_SHARE_MIN: Final = 6  # in per-mille mode, arrays this short are never sampled
_GAP_ITEMS: Final = 2  # an array is only sampled when that omits more items than this


def _containers(children: Iterable[object]) -> list[object]:
    kinds = set(map(type, children))  # C speed over the leaves; most nodes hold no containers
    if dict in kinds or list in kinds:
        return [c for c in children if type(c) is dict or type(c) is list]
    return []


def _deep_keys(root: object) -> set[str]:
    keys: set[str] = set()
    stack = [root]
    pop, extend = stack.pop, stack.extend
    while stack:
        node = pop()
        if type(node) is dict:
            keys.update(node)
            extend(_containers(node.values()))
        else:
            extend(_containers(node))  # type: ignore[arg-type]
    return keys


def _priority(items: list[object]) -> list[int]:
    """Indexes of ``items`` in the order they are worth keeping.

    First and last; then each item that shows a field name not yet shown; then one item of every
    distinct shape; then the rest from the head.
    """
    n = len(items)
    order = [0, n - 1] if n > 1 else [0]
    covered: set[str] = set()
    shapes: set[object] = set()
    for i in order:
        item = items[i]
        if type(item) is dict or type(item) is list:
            covered |= _deep_keys(item)
        shapes.add(frozenset(item) if type(item) is dict else type(item))
    cover: list[int] = []
    distinct: list[int] = []
    for i in range(1, n - 1):
        item = items[i]
        if type(item) is dict:
            shape: object = frozenset(item)
            new_shape = shape not in shapes
            if new_shape:
                shapes.add(shape)
            if covered.issuperset(item) and all(
                type(inner) is list and not _containers(inner) for inner in _containers(item.values())
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
        keys = _deep_keys(item)
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
    return order


def _scalar_size(value: object) -> int:
    if value is None or value is True:
        return 4
    if value is False:
        return 5
    if type(value) is int and -(10**15) < value < 10**15:
        return len(str(value))
    return len(repr(value))


def _str_size(text: str) -> int:
    if text.isprintable():
        return len(text) + 2 + text.count('"') + text.count("\\")
    return len(dumps(text))  # control characters and lone surrogates: measure the real escapes


class _Builder:
    __slots__ = (
        "bonus",
        "dropped",
        "intact",
        "items_omitted",
        "keys_omitted",
        "limit",
        "limits",
        "longest_list",
        "longest_string",
        "plans",
        "sampled_longest",
        "sampled_shortest",
        "size",
        "strings_truncated",
    )

    def __init__(self, limits: Limits, limit: int, plans: dict[int, list[int]]) -> None:
        self.limits = limits
        self.limit = limit
        self.plans = plans
        self.size = 0
        self.intact = 0
        self.items_omitted = 0
        self.keys_omitted = 0
        self.strings_truncated = 0
        self.dropped: dict[str, None] = {}
        self.longest_list = 0
        self.longest_string = 0
        self.sampled_longest = 0
        self.bonus = limits.bonus
        self.sampled_shortest = _UNLIMITED

    def _drop_keys(self, keys: list[str]) -> None:
        self.keys_omitted += len(keys)
        dropped = self.dropped
        for key in keys:
            if len(dropped) >= 64:
                break
            dropped[key] = None

    def string(self, text: str) -> str:
        head = self.limits.strings
        if len(text) > self.longest_string:
            self.longest_string = len(text)
        if len(text) <= head + _STRING_SLACK:
            self.size += _str_size(text)
            self.intact += 1
            return text
        cut = _cut(text, head)
        self.size += _str_size(cut)
        self.strings_truncated += 1
        return cut

    def value(self, node: object, depth: int) -> object:
        t = type(node)
        if t is str:
            return self.string(node)  # type: ignore[arg-type]
        if t is dict:
            return self.obj(node, depth)  # type: ignore[arg-type]
        if t is list:
            return self.array(node, depth)  # type: ignore[arg-type]
        self.size += _scalar_size(node)
        self.intact += 1
        return node

    def obj(self, node: dict[str, object], depth: int) -> object:
        limits = self.limits
        n = len(node)
        if n and depth >= limits.depth:
            marker = f"{{…{n} keys}}"
            self.size += len(marker) + 2
            self._drop_keys(list(node))
            return marker
        self.size += 1 + n if n else 2
        if self.size > self.limit:
            raise _Overflow
        out: dict[str, object] = {}
        value = self.value
        if depth and n > limits.keys:
            keep = limits.keys
            names = list(node)
            for key in names[:keep]:
                self.size += _str_size(key) + 1
                out[key] = value(node[key], depth + 1)
            self._drop_keys(names[keep:])
            marker_key = "…" if "…" not in node else "…more"
            out[marker_key] = f"[{n - keep} more keys]"
            self.size += 12 + len(str(n - keep)) + len(marker_key)
        else:
            for key, child in node.items():
                self.size += _str_size(key) + 1
                out[key] = value(child, depth + 1)
        if self.size > self.limit:
            raise _Overflow
        return out

    def array(self, node: list[object], depth: int) -> object:
        limits = self.limits
        n = len(node)
        if n > self.longest_list:
            self.longest_list = n
        if n and depth >= limits.depth:
            marker = f"[…{n} items]"
            self.size += len(marker) + 2
            self.items_omitted += n
            return marker
        # (per mille: short arrays stay whole, a gap marker would cost as much as their items)
        keep_n = max((n * limits.items + 999) // 1000, _SHARE_MIN) if limits.share else limits.items
        whole = n <= keep_n + _GAP_ITEMS
        if not whole and self.bonus:
            self.bonus -= 1
            keep_n += 1
            whole = n <= keep_n + _GAP_ITEMS
        if not whole:
            if n > self.sampled_longest:
                self.sampled_longest = n
            if n < self.sampled_shortest:
                self.sampled_shortest = n
        self.size += (1 + n if n else 2) if whole else 1 + keep_n
        if self.size > self.limit:
            raise _Overflow
        value = self.value
        if whole:
            out = [value(child, depth + 1) for child in node]
        else:
            plan = self.plans.get(id(node))
            if plan is None:
                plan = self.plans[id(node)] = _priority(node)
            keep = sorted(plan[:keep_n])
            out = []
            previous = -1
            for i in keep:
                if i - previous > 1:
                    out.append(self._gap(previous + 1, i - 1))
                out.append(value(node[i], depth + 1))
                previous = i
            if previous < n - 1:
                out.append(self._gap(previous + 1, n - 1))
            self.items_omitted += n - len(keep)
        if self.size > self.limit:
            raise _Overflow
        return out

    def _gap(self, first: int, last: int) -> str:
        self.size += _gap_size(first, last) + 1
        return _gap_text(first, last)


def _trial(root: object, limits: Limits, target: int, plans: dict[int, list[int]]) -> Condensed | None:
    builder = _Builder(limits, target, plans)
    try:
        value = builder.value(root, 0)
    except _Overflow:
        return None
    if builder.size > target:
        return None
    result = Condensed(
        value,
        builder.intact,
        builder.items_omitted,
        builder.keys_omitted,
        builder.strings_truncated,
        builder.dropped,
        size=builder.size,
    )
    result.longest_list = builder.longest_list
    result.longest_string = builder.longest_string
    result.uneven = builder.sampled_longest * 2 >= builder.sampled_shortest * 3
    result.limits = limits
    return result


_UNLIMITED: Final = 1 << 62
_STRING_STEPS: Final = (_UNLIMITED, 2000, 500, 200, 80, 32, 8)


def _best_items(
    root: object, strings: int, keys: int, depth: int, target: int, plans: dict[int, list[int]], share: bool
) -> tuple[Condensed, int] | None:
    """The copy with (nearly) the most array items that fits ``target``, and its item limit: a count
    per array, or with ``share`` a per-mille of each array.

    The preview's size grows about linearly with the limit, so each guess extrapolates from the
    largest copy that fitted; guesses that overflow bound the search from above.
    """
    best = _trial(root, Limits(strings, 1, keys, depth, share), target, plans)
    if best is None:
        best = _trial(root, Limits(strings, 0, keys, depth, share), target, plans)
        return None if best is None else (best, 0)
    lo, hi = 1, 1001 if share else _UNLIMITED  # lo fits; hi does not
    previous: tuple[int, int] = (0, 0)  # an earlier (limit, size) that fitted, for a secant step
    misses = 0
    while hi - lo > max(1, lo // 100):
        cap = 1000 if share else best.longest_list
        if not share and best.longest_list <= lo + _GAP_ITEMS:
            break  # every array the copy visited is whole: more items change nothing
        if misses >= 2:
            guess = (lo + hi) // 2
        else:  # aim a little under the target, so the next step is usually a small one up
            slope = (best.size - previous[1]) / (lo - previous[0])
            guess = lo + int((target * 0.99 - best.size) / max(slope, 1.0))
        guess = max(lo + 1, min(guess, hi - 1, lo * 64, cap))
        trial = _trial(root, Limits(strings, guess, keys, depth, share), target, plans)
        if trial is None:
            hi = guess
            misses += 1
        else:
            previous = (lo, best.size)
            lo, best = guess, trial
    return best, lo


def _name(strings: int, items: int, longest: int, depth: int, keys: int, *, share: bool) -> str:
    parts: list[str] = []
    if items < longest:
        parts.append(f"items={items / 10:g}%" if share else f"items={items}")
    if strings < _UNLIMITED:
        parts.append(f"strings={strings}")
    if depth < _MAX_DEPTH:
        parts.append(f"depth={depth}")
    if keys < _UNLIMITED:
        parts.append(f"keys={keys}")
    return ",".join(parts) or "compact"


def condense(root: object, target: int, plans: dict[int, list[int]] | None = None) -> Condensed | None:
    """The condensed copy of ``root`` keeping the most verbatim leaves within ``target`` (estimated
    serialized characters), or None when not even the smallest copy fits."""
    if plans is None:
        plans = {}  # keyed by id() of arrays that stay alive as long as ``root`` does
    memo = plans.get(-id(root))  # a retry at a slightly different target: redo only what won
    if memo is not None:
        strings, keys, depth, share = memo[1:]
        result = _best_items(root, strings, keys, depth, target, plans, share=bool(share))
        if result is not None:
            trial, items = result
            trial.strategy = _name(
                strings, items, 1000 if share else trial.longest_list, depth, keys, share=bool(share)
            )
            return _pack(root, _fill(root, trial, target, plans), target, plans)
        del plans[-id(root)]
    for depth, keys in ((_MAX_DEPTH, _UNLIMITED), (8, 32), (3, 8), (1, 0)):
        found: list[tuple[int, Condensed]] = []
        longest_string = _UNLIMITED
        for strings in _STRING_STEPS:
            if strings < _UNLIMITED and strings + _STRING_SLACK >= longest_string:
                continue  # cutting at this length would not change the copy
            result = _best_items(root, strings, keys, depth, target, plans, share=False)
            if result is None:
                continue
            trial, items = result
            if items:  # a copy without items has not seen the strings inside them
                longest_string = trial.longest_string
            trial.strategy = _name(strings, items, trial.longest_list, depth, keys, share=False)
            found.append((strings, trial))
            if trial.uneven:
                shared = _best_items(root, strings, keys, depth, target, plans, share=True)
                if shared is not None:
                    trial, items = shared
                    trial.strategy = _name(strings, items, 1000, depth, keys, share=True)
                    found.append((strings, trial))
            if len(found) > 2 and max(t.intact for _, t in found[-2:]) < max(t.intact for _, t in found[:-2]):
                break  # cutting strings harder has stopped paying off
        if found:
            # The most verbatim values; among copies within 3% of that, the one with longest strings.
            most = max(t.intact for _, t in found)
            chosen = max(
                (t for _, t in found if t.intact >= most * 0.97),
                key=lambda t: (-t.strings_truncated, t.intact),
            )
            limits = chosen.limits
            if limits is not None:
                plans[-id(root)] = [_UNSET, limits.strings, limits.keys, limits.depth, int(limits.share)]
            return _pack(root, _fill(root, chosen, target, plans), target, plans)
    return None


# (strings of the items that show new field names, strings of the others, dense, balanced)
_PACKINGS: Final = (
    (_UNLIMITED, _UNLIMITED, False, False),
    (_UNLIMITED, _UNLIMITED, True, False),
    (_UNLIMITED, _UNLIMITED, True, True),
)
_SMALL_PACKINGS: Final = ((8, 40, False, False), (8, 40, True, False), (8, 40, True, True))
_SMALL: Final = 3000  # targets under this also try packings with strings cut short
# ``plans[-id(root)]``: [the packing that won (-1: none), then the limits the search chose], so that
# a retry at a slightly different target redoes only those.
_UNSET: Final = -2


def _visible(value: object) -> int:
    if type(value) is not dict and type(value) is not list:
        return 0
    return len(_deep_keys(value))


def _pack(root: object, best: Condensed, target: int, plans: dict[int, list[int]]) -> Condensed:
    """``best`` or a greedy packing of ``root`` that shows more field names, or as many and more
    verbatim values."""
    if not best.items_omitted or (type(root) is not dict and type(root) is not list):
        return best
    packings: tuple[tuple[int, int, bool, bool], ...] = _PACKINGS
    if target < _SMALL:
        packings += _SMALL_PACKINGS
    memo = plans.get(-id(root), [_UNSET])
    if memo[0] != _UNSET:  # a retry of the same document at a slightly different target
        if memo[0] < 0:
            return best
        packings = (packings[memo[0]],) if memo[0] < len(packings) else ()
    packer = _Packer(root, target, plans)
    score = (_visible(best.value), best.intact)
    winner = -1
    for index, (cover, rest, dense, balance) in enumerate(packings):
        packed = packer.run(cover, rest, dense=dense, balance=balance)
        if packed is None:
            break
        packed_score = (_visible(packed.value), packed.intact)
        if packed_score > score:
            name = "balanced" if balance else "dense" if dense else "ordered"
            packed.strategy = f"packed:{name}" + (f",strings={rest}" if rest < _UNLIMITED else "")
            best, score, winner = packed, packed_score, index
    if memo[0] == _UNSET:
        memo[0] = winner
    return best


def _fill(root: object, best: Condensed, target: int, plans: dict[int, list[int]]) -> Condensed:
    """Spend what is left of ``target`` on one more item for as many sampled arrays as fit."""
    limits = best.limits
    if limits is None or limits.share or best.items_omitted == 0:
        return best
    strategy = best.strategy
    lo, hi = 0, _UNLIMITED  # that many bonus items fit / do not
    while hi - lo > 1:
        guess = lo * 2 + 1 if hi == _UNLIMITED else (lo + hi) // 2
        trial = _trial(root, replace(limits, bonus=guess), target, plans)
        if trial is None:
            hi = guess
        else:
            lo, best = guess, trial
            if trial.limits is not None and trial.items_omitted == 0:
                break
    if lo:
        best.strategy = f"{strategy},+1 item in {lo} arrays"
    else:
        best.strategy = strategy
    return best


# -- greedy packing -----------------------------------------------------------------------------------
#
# The limit search above keeps the same number of items in every array. The packer instead adds array
# items one at a time, most verbatim values per character first, until nothing more fits: items that
# show a field name not yet visible come first, and the room left at the end goes to items whose strings
# are cut hard, so that the target is used up.

_FILL_STRINGS: Final = 24  # strings in the last items squeezed into the leftover room
_HORIZON_MIN: Final = 64  # arrays this short offer every item; longer ones a prefix of their priority

_Skeleton = tuple[int, int, list[tuple[list[object], int]], list[str]]


class _Aliased(Exception):
    """The same array object sits at two places of the document; the packer cannot count it once."""


def _gap_text(first: int, last: int) -> str:
    return f"…[#{first}-{last} omitted]" if last > first else f"…[#{first} omitted]"


def _gap_size(first: int, last: int) -> int:
    """Serialized size of the gap marker for items ``first..last`` (0 when the gap is empty)."""
    return len(_gap_text(first, last)) + 2 if last >= first else 0


def _leaf_size(value: object) -> int:
    if value is None or value is True:
        return 4
    if value is False:
        return 5
    if type(value) is float:
        return len(dumps(value))
    return len(str(value))


def _cut(text: str, head: int) -> str:
    return f"{text[:head]}…[+{len(text) - head}]"


class _Array:
    __slots__ = ("depth", "horizon", "kept", "node", "strings")

    def __init__(self, node: list[object], depth: int) -> None:
        self.node = node
        self.depth = depth
        self.kept: list[int] = []
        self.strings: dict[int, int] = {}  # kept index -> the string limit it is shown with
        self.horizon: list[int] = []


class _Packer:
    """Greedy packing of one document into ``target`` characters (see above)."""

    def __init__(self, root: object, target: int, plans: dict[int, list[int]]) -> None:
        self.root = root
        self.target = target
        self.plans = plans
        self.skeletons: dict[tuple[int, int], _Skeleton] = {}

    def skeleton(self, node: object, depth: int, strings: int) -> _Skeleton:
        """(size, verbatim leaves, arrays inside, field names) of ``node`` shown with every array
        inside it as one gap marker and its strings cut to ``strings``."""
        key = (id(node), strings)
        found = self.skeletons.get(key)
        if found is None:
            arrays: list[tuple[list[object], int]] = []
            names: list[str] = []
            size, intact = self._skel(node, depth, strings, arrays, names)
            found = self.skeletons[key] = (size, intact, arrays, names)
        return found

    def _skel(
        self, node: object, depth: int, strings: int, arrays: list[tuple[list[object], int]], names: list[str]
    ) -> tuple[int, int]:
        t = type(node)
        if t is str:
            if len(node) <= strings + _STRING_SLACK:  # type: ignore[arg-type]
                return _str_size(node), 1  # type: ignore[arg-type]
            return _str_size(_cut(node, strings)), 0  # type: ignore[arg-type]
        if t is list:
            n = len(node)  # type: ignore[arg-type]
            if not n:
                return 2, 0
            if depth >= _MAX_DEPTH:
                return len(f"[…{n} items]") + 2, 0
            arrays.append((node, depth))  # type: ignore[arg-type]
            return 2 + _gap_size(0, n - 1), 0
        if t is dict:
            n = len(node)  # type: ignore[arg-type]
            if not n:
                return 2, 0
            if depth >= _MAX_DEPTH:
                return len(f"{{…{n} keys}}") + 2, 0
            size, intact = 1 + 2 * n, 0
            for name, child in node.items():  # type: ignore[attr-defined]
                names.append(name)
                child_size, child_intact = self._skel(child, depth + 1, strings, arrays, names)
                size += _str_size(name) + child_size
                intact += child_intact
            return size, intact
        return _leaf_size(node), 1

    def run(
        self, cover_strings: int, rest_strings: int, *, dense: bool, balance: bool = False
    ) -> Condensed | None:
        """The packed copy: items showing new field names get ``cover_strings``, others
        ``rest_strings``; ``dense`` takes items by values per character, else in each array's priority
        order (round robin over arrays); ``balance`` first picks the items of the top arrays that
        keep the most values for their size and gap markers together. None when the document has no
        arrays to pack or reuses one array object."""
        root = self.root
        if type(root) is not dict and type(root) is not list:
            return None
        try:
            return _Run(self, cover_strings, rest_strings, dense, balance).pack()
        except _Aliased:
            return None


class _Run:
    def __init__(
        self, packer: _Packer, cover_strings: int, rest_strings: int, dense: bool, balance: bool
    ) -> None:
        self.packer = packer
        self.dense = dense
        self.balance = balance
        self.rank: dict[int, dict[int, int]] = {}
        self.cover = cover_strings
        self.rest = rest_strings
        self.arrays: dict[int, _Array] = {}
        self.visible: set[str] = set()
        self.heap: list[tuple[int, float, int, int, int]] = []
        self.counter = 0
        self.used = 0
        self.fill = 0  # in the fill pass: the string limit of every item added
        self.stop_at_tier: int | None = None

    def entry(self, arr: _Array, i: int) -> tuple[int, float, int, int]:
        """(tier, -density, size added, string limit) of adding item ``i`` of ``arr``."""
        node = arr.node
        item = node[i]
        skeleton = self.packer.skeleton
        depth = arr.depth + 1
        if self.fill:
            strings, tier = self.fill, 1
        else:
            names = skeleton(item, depth, self.rest)[3]
            ends = depth <= 2 and (i == 0 or i == len(node) - 1)  # top arrays keep first and last
            tier = 0 if ends or not self.visible.issuperset(names) else 1
            strings = self.cover if tier == 0 else self.rest
        size, gain, _, _ = skeleton(item, depth, strings)
        kept = arr.kept
        pos = bisect_left(kept, i)
        a = kept[pos - 1] + 1 if pos else 0
        b = kept[pos] - 1 if pos < len(kept) else len(node) - 1
        left, right = _gap_size(a, i - 1), _gap_size(i + 1, b)
        delta = size + left + right - _gap_size(a, b) + (left > 0) + (right > 0)
        if not self.dense:
            return tier, float(self.rank[id(node)][i]), delta, strings
        worth = gain + 0.5 if i == 0 or i == len(node) - 1 else float(gain)  # first and last a bit more
        return tier, -worth / max(delta, 1), delta, strings

    def offer(self, arr: _Array, i: int) -> None:
        tier, density, _, _ = self.entry(arr, i)
        heapq.heappush(self.heap, (tier, density, self.counter, id(arr.node), i))
        self.counter += 1

    def register(self, node: list[object], depth: int) -> None:
        if id(node) in self.arrays:
            raise _Aliased
        arr = self.arrays[id(node)] = _Array(node, depth)
        n = len(node)
        if n <= _HORIZON_MIN:
            order: list[int] = list(range(n))
        else:
            plans = self.packer.plans
            order = plans.get(id(node)) or []
            if not order:
                order = plans[id(node)] = _priority(node)
            sample = order[:16]
            skeleton = self.packer.skeleton
            average = sum(skeleton(node[i], depth + 1, self.rest)[0] for i in sample) / len(sample)
            room = max(self.packer.target - self.used, 0)
            order = order[: max(_HORIZON_MIN, int(3 * room / max(average, 1.0)) + 2)]
        arr.horizon = order
        if not self.dense:
            self.rank[id(node)] = {i: rank for rank, i in enumerate(order)}
        for i in order:
            self.offer(arr, i)

    def drain(self) -> None:
        heap, arrays, target = self.heap, self.arrays, self.packer.target
        pop = heapq.heappop
        while heap:
            tier, density, _, aid, i = pop(heap)
            arr = arrays[aid]
            if i in arr.strings:
                continue  # already kept
            if self.stop_at_tier is not None and tier >= self.stop_at_tier:
                heapq.heappush(heap, (tier, density, self.counter, aid, i))
                self.counter += 1
                return
            now = self.entry(arr, i)
            if (now[0], now[1]) > (tier, density) and heap and (now[0], now[1]) > heap[0][:2]:
                self.offer(arr, i)  # it got worse than the next best: look again later
                continue
            delta, strings = now[2], now[3]
            if self.used + delta > target:
                continue
            self.used += delta
            insort(arr.kept, i)
            arr.strings[i] = strings
            _, _, nested, names = self.packer.skeleton(arr.node[i], arr.depth + 1, strings)
            self.visible.update(names)
            for child, child_depth in nested:
                self.register(child, child_depth)

    def pack(self) -> Condensed | None:
        root = self.packer.root
        if type(root) is list:
            self.used = 2 + _gap_size(0, len(root) - 1) if root else 2
            nested: list[tuple[list[object], int]] = [(root, 0)] if root else []
        else:
            self.used, _, nested, names = self.packer.skeleton(root, 0, self.rest)
            self.visible.update(names)
        if self.used > self.packer.target:
            return None
        for child, depth in nested:
            self.register(child, depth)
        if self.balance:
            self.stop_at_tier = 1
            self.drain()  # the items that show new field names first
            self.stop_at_tier = None
            self.balanced([self.arrays[id(child)] for child, _ in nested])
        self.drain()
        # The room left: offer the items not taken yet again, with their strings cut hard.
        self.fill = min(_FILL_STRINGS, self.rest)
        for arr in list(self.arrays.values()):
            kept = set(arr.kept)
            for i in arr.horizon:
                if i not in kept:
                    self.offer(arr, i)
        self.drain()
        return self.render()

    def _choose(self, arr: _Array, price: float) -> list[int]:
        """The items of ``arr`` that maximise verbatim values minus ``price`` per character, gap
        markers included (a two-state dynamic programme over the array's offered items)."""
        node, kept = arr.node, arr.strings
        n = len(node)
        marker = price * (_gap_size(n // 2, n - 1) + 1)
        skeleton, depth, rest = self.packer.skeleton, arr.depth + 1, self.rest
        positions = sorted(arr.horizon)
        minus = float("-inf")
        in_kept, in_gap = 0.0, minus
        choices: list[tuple[bool, bool]] = []  # (kept came from gap, gap came from kept) per position
        previous = -1
        for i in positions:
            if i > previous + 1 and in_kept > minus:  # items between are not offered: a gap
                if in_kept - marker > in_gap:
                    in_gap = in_kept - marker
                in_kept = minus
            if i in kept:
                gain, cost = 0.0, 0.0
            else:
                size, intact, _, _ = skeleton(node[i], depth, rest)
                gain, cost = float(intact), price * (size + 1)
            from_gap = in_gap > in_kept
            new_kept = (in_gap if from_gap else in_kept) + gain - cost
            if i in kept:
                new_gap, gap_from_kept = minus, False
            else:
                gap_from_kept = in_kept - marker > in_gap
                new_gap = in_kept - marker if gap_from_kept else in_gap
            choices.append((from_gap, gap_from_kept))
            in_kept, in_gap = new_kept, new_gap
            previous = i
        if previous < n - 1 and in_kept - marker > in_gap:
            in_gap = in_kept - marker
            in_kept = minus
        state_kept = in_kept >= in_gap
        chosen: list[int] = []
        for k in range(len(positions) - 1, -1, -1):
            from_gap, gap_from_kept = choices[k]
            if state_kept:
                chosen.append(positions[k])
                state_kept = not from_gap
            else:
                state_kept = gap_from_kept
        chosen.reverse()
        return chosen

    def _array_size(self, arr: _Array, chosen: list[int]) -> int:
        node, skeleton, depth = arr.node, self.packer.skeleton, arr.depth + 1
        size, elements, previous = 2, 0, -1
        for i in chosen:
            if i - previous > 1:
                size += _gap_size(previous + 1, i - 1)
                elements += 1
            size += skeleton(node[i], depth, arr.strings.get(i, self.rest))[0]
            elements += 1
            previous = i
        if previous < len(node) - 1:
            size += _gap_size(previous + 1, len(node) - 1)
            elements += 1
        return size + elements - 1

    def balanced(self, arrays: list[_Array]) -> None:
        """Keep, in every one of ``arrays``, the items chosen at the lowest price per character that
        fits (the same price for all, so that room goes where it keeps the most values)."""
        arrays = [arr for arr in arrays if len(arr.node) > 1]
        if not arrays:
            return
        base = self.used - sum(self._array_size(arr, arr.kept) for arr in arrays)
        best: list[list[int]] | None = None
        lo, hi = 0.0, 1.0 / 64  # price per character: lo keeps too much; hi, once found, fits

        def fits(price: float) -> list[list[int]] | None:
            picks = [self._choose(arr, price) for arr in arrays]
            total = base + sum(self._array_size(arr, p) for arr, p in zip(arrays, picks, strict=True))
            return picks if total <= self.packer.target else None

        for _ in range(16):
            best = fits(hi)
            if best is not None:
                break
            lo, hi = hi, hi * 4
        for _ in range(14):
            if best is None or hi - lo < hi / 200:
                break
            price = (lo + hi) / 2
            picks = fits(price)
            if picks is None:
                lo = price
            else:
                best, hi = picks, price
        if best is None:
            return
        skeleton = self.packer.skeleton
        for arr, chosen in zip(arrays, best, strict=True):
            for i in chosen:
                if i in arr.strings:
                    continue
                insort(arr.kept, i)
                arr.strings[i] = self.rest
                _, _, nested, names = skeleton(arr.node[i], arr.depth + 1, self.rest)
                self.visible.update(names)
                for child, child_depth in nested:
                    self.register(child, child_depth)
        self.used = base + sum(self._array_size(arr, arr.kept) for arr in arrays)

    def render(self) -> Condensed:
        out = Condensed(None)
        arrays = self.arrays

        def build(node: object, depth: int, strings: int) -> object:
            t = type(node)
            if t is str:
                if len(node) <= strings + _STRING_SLACK:  # type: ignore[arg-type]
                    out.intact += 1
                    return node
                out.strings_truncated += 1
                return _cut(node, strings)  # type: ignore[arg-type]
            if t is dict:
                n = len(node)  # type: ignore[arg-type]
                if n and depth >= _MAX_DEPTH:
                    out.keys_omitted += n
                    for name in list(node)[: max(0, 64 - len(out.dropped))]:  # type: ignore[call-overload]
                        out.dropped[name] = None
                    return f"{{…{n} keys}}"
                return {k: build(v, depth + 1, strings) for k, v in node.items()}  # type: ignore[attr-defined]
            if t is list:
                n = len(node)  # type: ignore[arg-type]
                if n and depth >= _MAX_DEPTH:
                    out.items_omitted += n
                    return f"[…{n} items]"
                arr = arrays.get(id(node))
                if arr is None:
                    out.items_omitted += n
                    return [_gap_text(0, n - 1)] if n else []
                items: list[object] = []
                previous = -1
                for i in arr.kept:
                    if i - previous > 1:
                        items.append(_gap_text(previous + 1, i - 1))
                    items.append(build(node[i], depth + 1, arr.strings[i]))  # type: ignore[index]
                    previous = i
                if previous < n - 1:
                    items.append(_gap_text(previous + 1, n - 1))
                out.items_omitted += n - len(arr.kept)
                return items
            out.intact += 1
            return node

        out.value = build(self.packer.root, 0, self.rest)
        out.size = self.used
        return out
