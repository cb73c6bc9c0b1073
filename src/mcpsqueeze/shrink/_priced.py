"""Priced packing: the copy of a document that keeps the most verbatim values per character.

Give characters a price ``p`` in values. Then every choice in the document can be made on its own:
a long string is shown whole when the value it keeps is worth its extra characters (``1 > p * extra``)
and cut to a short head otherwise; an array item is kept when what it shows is worth its characters,
else folded into a gap marker, and an array chooses its items with the gap markers' cost in view (a
small dynamic programme). The lowest price whose copy fits the target is searched for, and the room
that copy leaves is then topped up greedily (a cut string shown whole, one more item).

Unlike a limit shared by the whole document, each string and each item decides for itself: one long
description is cut while the short summary next to it stays whole, and a directory tree keeps whole
subtrees instead of scattering gap markers. Field names stay visible: the fewest items that show
every name are kept whatever their price, and so are the first and last items of the arrays at the
top; when those alone do not fit, first and last may go, then the names.
"""

from __future__ import annotations

import heapq
import math
from bisect import bisect_left
from collections.abc import Callable
from dataclasses import dataclass, field
from itertools import accumulate
from typing import Final

from mcpsqueeze.shrink._copy import (
    MAX_DEPTH,
    STRING_SLACK,
    Condensed,
    Plans,
    collapsed_items,
    collapsed_keys,
    cut,
    cut_size,
    deep_keys,
    gap_size,
    gap_text,
    leaf_size,
    note_dropped,
    str_size,
)
from mcpsqueeze.shrink._unusual import PIN_FROM, unusual_items

__all__ = ["Priced", "priced"]

_NEG: Final = -math.inf
_HORIZON_MIN: Final = 64  # arrays this short offer every item; longer ones a prefix of their priority
_LEAST: Final = 1e-5  # a price at which everything offered is kept whole
_MOST: Final = 64.0  # a price at which everything that may be folded or cut is
_HEAD: Final = 8  # the head kept by the strings the packing cuts (short heads keep the most values)

# what the top-up may add: (a profile's next cut string) or (an array, an item, priced or folded)
_Offer = tuple["_Profile | None", "_Array | None", int, bool]
# what the DP reads of an item without arrays inside: (characters, values, sorted extras or None, their
# prefix sums, the one extra of an item with a single cut string or None)
_Plain = tuple[int, int, "list[int] | None", list[int], "int | None"]
# (objective, characters, verbatim values) of a choice at one price
_Score = tuple[float, int, int]
_NONE: Final[_Score] = (_NEG, 0, 0)


@dataclass(slots=True, eq=False)
class _Profile:
    """One kept node and everything below it except array items: what it shows in any case, and
    the strings it may show whole for a price."""

    head: int = 0  # the head a long string below it is cut to (longer for a pinned item)
    value: int = 0  # verbatim leaves shown in any case
    cost: int = 0  # characters in any case (cuttable strings at their cut size)
    # per cuttable string, in document order: characters to show it whole
    extra: list[int] = field(default_factory=list)
    order: list[int] = field(default_factory=list)  # indexes of ``extra``, cheapest first
    sorted_extra: list[int] = field(default_factory=list)
    fixed: bool = False  # nothing inside to choose: the same at every price
    prefix: list[int] = field(default_factory=lambda: [0])  # cumulative ``extra`` in ``order``
    arrays: list[_Array] = field(default_factory=list)
    shown: int = 0  # in the current choice: how many cuttable strings are shown whole
    # below this price every array inside is a short array of leaves kept whole (``_Array.seal``)
    leafy_below: float = 0.0

    def seal(self) -> None:
        if self.arrays:
            self.leafy_below = min(arr.whole_below for arr in self.arrays)
        extra = self.extra
        if len(extra) <= 1:  # (most profiles: a record with one long string, or none)
            self.fixed = not extra and not self.arrays
            if extra:
                self.order = [0]
                self.sorted_extra = extra
                self.prefix.append(extra[0])
            return
        self.order = sorted(range(len(extra)), key=extra.__getitem__)
        self.sorted_extra = [extra[i] for i in self.order]
        self.prefix = [0, *accumulate(self.sorted_extra)]

    def whole_at(self, p: float) -> int:
        """How many cuttable strings are shown whole at price ``p`` (those whose extra characters
        cost less than the value they keep)."""
        return bisect_left(self.sorted_extra, 1.0 / p) if self.sorted_extra else 0


_NO_EXTRA: Final[list[int]] = []  # shared by every leaf profile, which never fills them
_NO_ARRAYS: Final[list[_Array]] = []
_PREFIX: Final[list[int]] = [0]


def _leaf(cost: int, head: int) -> _Profile:
    """The sealed profile of one verbatim leaf (an array item): made without ``_walk`` or ``seal``,
    since arrays of tags, names and numbers hold many."""
    profile = _Profile.__new__(_Profile)
    profile.head = head
    profile.value = 1
    profile.cost = cost
    profile.extra = profile.order = profile.sorted_extra = _NO_EXTRA
    profile.fixed = True
    profile.prefix = _PREFIX
    profile.arrays = _NO_ARRAYS
    profile.shown = 0
    profile.leafy_below = 0.0
    return profile


@dataclass(slots=True, eq=False)
class _Array:
    """One array within a kept profile: the items it offers and which it keeps."""

    n: int
    positions: list[int] = field(default_factory=list)  # offered items, ascending
    items: dict[int, _Profile] = field(default_factory=dict)
    cover: set[int] = field(default_factory=set)  # items that show field names needed nowhere else
    ends: set[int] = field(default_factory=set)  # first and last of an array near the top
    # items the call's words match or that stand out (``_unusual``), best first: kept, strings whole
    pins: list[int] = field(default_factory=list)
    # the items that cannot be folded (relaxed when they do not fit)
    must: set[int] = field(default_factory=set)
    bonus: dict[int, float] = field(default_factory=dict)
    # the longest gap marker the array can have, and its comma: the price search may then
    # overestimate a copy by a few characters, never underestimate it
    gap: int = 0
    kept: list[int] = field(default_factory=list)  # the final choice
    # An array of leaves offered whole (short arrays: tags, names, numbers) keeps every item
    # below the price at which its cheapest-to-drop item stops paying its way: below
    # ``whole_below``, its choice is ``whole_score`` (objective at price 0, characters, values).
    whole_below: float = 0.0
    whole_score: _Score = _NONE
    # per offered position: (index, item, bonus, a gap before it, and for an item without arrays
    # inside what the DP reads of it, ``_Plain``): what the DP walks
    seq: list[tuple[int, _Profile, float, bool, _Plain | None]] = field(default_factory=list)

    def seal(self) -> None:
        """Work out ``gap``, ``seq`` and ``whole_below`` once the items are compiled."""
        self.gap = gap_size(max(self.n - 2, 0), self.n - 1) + 1
        previous = -1
        seq: list[tuple[int, _Profile, float, bool, _Plain | None]] = []
        for i in self.positions:
            item = self.items[i]
            plain: _Plain | None = None
            if item.fixed:
                plain = (item.cost, item.value, None, _PREFIX, None)
            elif not item.arrays and len(item.sorted_extra) == 1:  # (a record with one long string)
                plain = (item.cost, item.value, None, _PREFIX, item.sorted_extra[0])
            elif not item.arrays:
                plain = (item.cost, item.value, item.sorted_extra, item.prefix, None)
            seq.append((i, item, self.bonus.get(i, 0.0), i > previous + 1, plain))
            previous = i
        self.seq = seq
        if len(self.positions) != self.n:
            return
        items = [self.items[i] for i in self.positions]
        if not all(item.fixed for item in items):
            return
        bonus = self.bonus
        # item i pays its way while (value + bonus) - p * (characters + comma) > 0
        below = min(
            (item.value + bonus.get(i, 0.0)) / (item.cost + 1)
            for i, item in zip(self.positions, items, strict=True)
        )
        self.whole_below = below * (1 - 1e-9)  # (a margin: the DP's float sums then agree)
        cost = 1 + sum(item.cost + 1 for item in items)
        value = sum(item.value for item in items)
        self.whole_score = (value + sum(bonus.values()), cost, value)


class Priced:
    """One document compiled for pricing (within each array's horizon), and its packing."""

    def __init__(self, root: object, target: int, plans: Plans) -> None:
        self.root = root
        self.target = target
        # Only while compiling: held after, it would tie a reference cycle (``plans.priced`` is this),
        # and the packing's thousands of objects would wait for the garbage collector instead of going
        # when the document's shrink is done.
        self._plans: Plans | None = plans
        self.arrays: list[_Array] = []
        self.covers: list[tuple[int, _Array, int]] = []  # (names shown, array, item) of the cover items
        self.price = 1.0  # the price found
        self.hint: float | None = None  # on a retry: the price found last time
        self.room = 0  # during the top-up: characters left
        self.heap: list[tuple[float, int, _Offer]] = []  # the top-up's offers, best first
        self.pushed = 0
        self._costs: dict[float, tuple[int, int]] = {}  # see ``run``
        self._key_sizes: dict[str, int] = {}  # a field name's size with its colon
        # during the top-up: (-)id(item) -> its (characters, values) as priced (folded)
        self._item_sizes: dict[int, tuple[int, int]] = {}
        self._sizes_for = (0.0, 0)  # the price and must items ``_item_sizes`` hold for
        self._relaxed = 0  # must items given up in this run (0: every must item kept)
        self._terms = plans.terms
        self._pins = plans.pins
        needed = plans.names(root) - self._own_names(root)
        self.top = self._compile(root, 0, needed or None, _HEAD)
        self._plans = None

    # -- compiling: the document within each array's horizon, as profiles and arrays ------------------

    def _compile(self, node: object, depth: int, needed: set[str] | None, head: int) -> _Profile:
        profile = _Profile(head)
        self._walk(node, depth, profile, needed)
        profile.seal()
        return profile

    def _walk(self, node: object, depth: int, profile: _Profile, needed: set[str] | None) -> None:
        t = type(node)
        if t is str:
            text: str = node  # type: ignore[assignment]
            if len(text) <= profile.head + STRING_SLACK:
                profile.cost += str_size(text)
                profile.value += 1
            else:
                short = cut_size(text, profile.head)
                profile.cost += short
                profile.extra.append(str_size(text) - short)
            return
        if t is dict:
            mapping: dict[str, object] = node  # type: ignore[assignment]
            n = len(mapping)
            if n and depth >= MAX_DEPTH:
                profile.cost += str_size(collapsed_keys(n))
                return
            # (leaves inline, str_size too, key sizes remembered: most objects are records of the same
            # few keys; this loop runs for every member of every item within the horizons)
            cost = profile.cost + (1 + n if n else 2)
            value = profile.value
            sizes = self._key_sizes
            head = profile.head
            whole = head + STRING_SLACK
            for key, child in mapping.items():
                size = sizes.get(key)
                if size is None:
                    size = sizes[key] = str_size(key) + 1
                cost += size
                kind = type(child)
                if kind is str:
                    text = child  # type: ignore[assignment]
                    if len(text) <= whole:
                        if text.isprintable():
                            cost += len(text) + 2 + text.count('"') + text.count("\\")
                        else:
                            cost += str_size(text)
                        value += 1
                    else:
                        short = cut_size(text, head)
                        cost += short
                        profile.extra.append(str_size(text) - short)
                elif kind is int:
                    cost += len(str(child))
                    value += 1
                elif kind is dict or kind is list:
                    profile.cost = cost
                    profile.value = value
                    self._walk(child, depth + 1, profile, needed)
                    cost = profile.cost
                    value = profile.value
                else:
                    cost += leaf_size(child)
                    value += 1
            profile.cost = cost
            profile.value = value
            return
        if t is list:
            items: list[object] = node  # type: ignore[assignment]
            n = len(items)
            if not n:
                profile.cost += 2
            elif depth >= MAX_DEPTH:
                profile.cost += str_size(collapsed_items(n))
            else:
                profile.arrays.append(self._array(items, depth, needed, profile.head))
            return
        profile.cost += leaf_size(node)
        profile.value += 1

    def _array(self, node: list[object], depth: int, needed: set[str] | None, head: int) -> _Array:
        arr = _Array(len(node))
        self.arrays.append(arr)
        n = arr.n
        if n <= _HORIZON_MIN:
            order = list(range(n))
        else:
            assert self._plans is not None  # (compiling)
            order = self._plans.ordered(node)[0]
        ends = (0, n - 1)
        top = depth <= 1
        # Items that show field names still needed somewhere are kept; names inside them are then
        # needed from their own arrays.
        musts: dict[int, set[str] | None] = {}
        if top:
            arr.ends.update(ends)
            musts.update(dict.fromkeys(ends))
        if needed:
            for i, new in _cover(node, order, needed):
                musts[i] = new
                arr.cover.add(i)
                self.covers.append((len(new), arr, i))
        for i in ends:
            arr.bonus[i] = 0.5
        if n >= PIN_FROM:  # items the call's words match or that stand out are kept, their strings whole
            found = self._pins.get(id(node))
            arr.pins = unusual_items(node, self._terms) if found is None else found
            for i in arr.pins:
                musts.setdefault(i, None)
                arr.bonus[i] = 1.0
        if n > _HORIZON_MIN:
            sample = order[:16]
            sizes = [self._rough_size(node[i]) for i in sample]
            average = max(sum(sizes) / len(sizes), 1.0)
            order = order[: max(_HORIZON_MIN, int(2 * self.target / average) + 2)]
        arr.positions = sorted(set(order) | set(musts))
        pins = set(arr.pins)
        for i in arr.positions:
            child = node[i]
            kind = type(child)
            own = 480 if i in pins else head  # (a pinned item shows its strings whole up to about 480)
            if kind is str and len(child) <= own + STRING_SLACK:  # type: ignore[arg-type]
                arr.items[i] = _leaf(str_size(child), own)  # type: ignore[arg-type]
                continue
            if kind is not str and kind is not dict and kind is not list:
                arr.items[i] = _leaf(leaf_size(child), own)
                continue
            need = musts.get(i)
            if need:
                need = need - self._own_names(node[i])
            arr.items[i] = self._compile(node[i], depth + 1, need or None, own)
        arr.seal()
        return arr

    def _own_names(self, node: object) -> set[str]:
        """Field names of ``node`` shown even when every array inside it is folded."""
        names: set[str] = set()
        stack = [node]
        while stack:
            cur = stack.pop()
            if isinstance(cur, dict):
                names.update(cur)
                stack.extend(v for v in cur.values() if type(v) is dict)
        return names

    def _rough_size(self, node: object, depth: int = 0) -> int:
        """About the size of ``node`` with long strings cut (lists judged by their first items,
        nesting by its first levels)."""
        if isinstance(node, str):
            return min(str_size(node), _HEAD + STRING_SLACK + 10)
        if depth >= 8 and isinstance(node, dict | list):  # (eight levels tell)
            return 16
        if isinstance(node, dict):
            return 2 + sum(len(k) + 4 + self._rough_size(v, depth + 1) for k, v in node.items())
        if isinstance(node, list):
            return 2 + sum(self._rough_size(v, depth + 1) + 1 for v in node[:8])
        return leaf_size(node)

    # -- choosing at one price -------------------------------------------------------------------------

    def score(self, profile: _Profile, p: float, record: bool) -> _Score:
        if profile.fixed:
            return profile.value - p * profile.cost, profile.cost, profile.value
        k = profile.whole_at(p)
        cost = profile.cost + profile.prefix[k]
        value = profile.value + k
        obj = value - p * cost
        if record:
            profile.shown = k
        for arr in profile.arrays:
            o, c, v = self._choose(arr, p, record)
            obj += o
            cost += c
            value += v
        return obj, cost, value

    def _choose(self, arr: _Array, p: float, record: bool) -> _Score:
        """The best items of ``arr`` at price ``p``: two states, after a kept item (K) and inside a
        gap (G), walked over the offered positions; items between them are always in a gap.

        (Each state is three locals, objective, characters and values, not a tuple: this loop runs
        for every offered item at every price tried.)"""
        if p < arr.whole_below:  # every item pays its way: all kept (what the DP below would find)
            if record:
                arr.kept = list(arr.positions)
            base, cost, value = arr.whole_score
            return base - p * cost, cost, value
        gap_cost = arr.gap
        gap_obj = p * gap_cost
        ko, kc, kv = -p, 1, 0  # K: "[" and "]" less the comma counted per element
        go, gc, gv = _NEG, 0, 0  # G
        # when recording, per position: (a forced gap before it came from K, K came from G, G from K)
        trail: list[tuple[bool, bool, bool]] = []
        must = arr.must
        score = self.score
        whole = 1.0 / p  # (``_Profile.whole_at``, inlined below)
        bisect = bisect_left
        for i, item, bonus, jump, plain in arr.seq:
            forced = False
            if jump:
                opened = ko - gap_obj
                forced = opened > go
                if forced:
                    go, gc, gv = opened, kc + gap_cost, kv
                ko, kc, kv = _NEG, 0, 0
            if plain is not None:  # (inlined: most items of most arrays have no choice inside, or
                c, v, extra, prefix, one = plain  # only which strings to show whole: ``score`` inlined)
                if one is not None:  # one cut string: shown whole below its price (bisect of [one])
                    if one < whole:
                        c += one
                        v += 1
                elif extra is not None:
                    k = bisect(extra, whole)
                    c += prefix[k]
                    v += k
                o = v - p * c
            elif p < item.leafy_below:  # (... or short arrays of leaves kept whole: the same sums)
                k = bisect_left(item.sorted_extra, whole) if item.sorted_extra else 0
                c = item.cost + item.prefix[k]
                v = item.value + k
                o = v - p * c
                for inner in item.arrays:
                    base, inner_cost, inner_value = inner.whole_score
                    o += base - p * inner_cost
                    c += inner_cost
                    v += inner_value
            else:
                o, c, v = score(item, p, False)
            from_gap = go > ko
            if from_gap:
                nko, nkc, nkv = go + o + bonus - p, gc + c + 1, gv + v
            else:
                nko, nkc, nkv = ko + o + bonus - p, kc + c + 1, kv + v
            gap_from_kept = False
            if i in must:
                go, gc, gv = _NEG, 0, 0
            else:
                opened = ko - gap_obj
                gap_from_kept = opened > go
                if gap_from_kept:
                    go, gc, gv = opened, kc + gap_cost, kv
            if record:
                trail.append((forced, from_gap, gap_from_kept))
            ko, kc, kv = nko, nkc, nkv
        end_forced = False
        if arr.positions[-1] < arr.n - 1:
            opened = ko - gap_obj
            end_forced = opened > go
            if end_forced:
                go, gc, gv = opened, kc + gap_cost, kv
            ko, kc, kv = _NEG, 0, 0
        in_kept = ko >= go
        if record:
            self._record(arr, p, trail, in_kept or end_forced)
        return (ko, kc, kv) if in_kept else (go, gc, gv)

    def _record(self, arr: _Array, p: float, trail: list[tuple[bool, bool, bool]], in_kept: bool) -> None:
        """Walk ``trail`` back from the final state; ``in_kept``: the last position ends in K."""
        chosen: list[int] = []
        positions = arr.positions
        state = in_kept
        for k in range(len(positions) - 1, -1, -1):
            forced, from_gap, gap_from_kept = trail[k]
            if state:
                chosen.append(positions[k])
                state = not from_gap
            else:
                state = gap_from_kept
            if not state and forced:  # the gap before this position opened after a kept item
                state = True
        chosen.reverse()
        arr.kept = chosen
        for i in chosen:
            self.score(arr.items[i], p, True)

    # -- searching the price, topping up, rendering ----------------------------------------------------

    def run(self) -> Condensed | None:
        target = self.target
        # price -> (characters, verbatim values): a copy's size at a price does not depend on the
        # target, so a retry at a slightly different target starts from what the last run measured
        costs = self._costs

        def cost(p: float) -> int:
            found = costs.get(p)
            if found is None:
                found = costs[p] = self.score(self.top, p, False)[1:]
            return found[0]

        # When the items that must stay do not fit, the pinned items may go, the least of them first;
        # then first and last; then the items that show field names, the one that shows the fewest first.
        dropping = sorted(self.covers, key=lambda cover: cover[0], reverse=True)
        unpin = sorted(
            ((rank, k, i) for k, arr in enumerate(self.arrays) for rank, i in enumerate(arr.pins)),
            reverse=True,
        )
        for arr in self.arrays:
            arr.must = arr.ends | arr.cover | set(arr.pins)
        self._relaxed = 0
        while cost(_MOST) > target:
            costs = {}  # (the sizes measured with every must item kept stay in self._costs)
            self._relaxed += 1
            if unpin:
                _, k, i = unpin.pop(0)
                arr = self.arrays[k]
                if i not in arr.ends and i not in arr.cover:
                    arr.must.discard(i)
            elif any(arr.must - arr.cover for arr in self.arrays):
                for arr in self.arrays:
                    arr.must = set(arr.cover)
            elif dropping:
                _, arr, i = dropping.pop()
                arr.must.discard(i)
            else:
                return None
        lo, hi = _LEAST, _MOST
        if cost(lo) <= target:
            hi = lo
        else:
            # The tightest bracket measured so far (on a retry, around the last price), else one near
            # the density of the whole copy, widened until it holds the price sought.
            for p, (size, _) in costs.items():
                if size > target:
                    lo = max(lo, p)
                else:
                    hi = min(hi, p)
            if hi / lo > 4.0:
                guess = min(max(self.hint or costs[_LEAST][1] / costs[_LEAST][0], lo * 1.5), hi / 1.5)
                if cost(guess) > target:
                    lo = guess
                    while lo * 2.0 < hi and cost(lo * 2.0) > target:
                        lo *= 2.0
                    hi = min(hi, lo * 2.0)
                else:
                    hi = guess
                    while hi / 1.5 > lo and cost(hi / 1.5) <= target:
                        hi /= 1.5
                    lo = max(lo, hi / 1.5)
            hi = self._search(lo, hi, cost)
        self.price = hi
        self.score(self.top, hi, True)
        self.top_up(self.target - self._size(self.top))
        return self.render()

    def _search(self, lo: float, hi: float, cost: Callable[[float], int]) -> float:
        """The lowest price (nearly) whose copy fits, between ``lo`` (too big) and ``hi`` (fits):
        steps interpolated on log price against size, halving when that stalls. The top-up fills
        what the last percent leaves."""
        target = self.target
        lo_cost, hi_cost = cost(lo), cost(hi)
        flat = False  # the last step met no new size: the sizes jump there, interpolating misleads
        for step in range(22):
            if hi / lo < 1.001 or hi_cost >= target * 0.99:
                break  # (stopping at a jump pinned to 1 % instead lost values: items of 50-200 KB)
            span = lo_cost - hi_cost
            t = (lo_cost - target) / span if span > 0 and step % 3 != 2 and not flat else 0.5
            t = min(max(t, 0.05), 0.95)
            mid = math.exp(math.log(lo) + t * (math.log(hi) - math.log(lo)))
            mid_cost = cost(mid)
            flat = mid_cost in (lo_cost, hi_cost)
            if mid_cost <= target:
                hi, hi_cost = mid, mid_cost
            else:
                lo, lo_cost = mid, mid_cost
        return hi

    def _size(self, profile: _Profile) -> int:
        """The exact serialized size of ``profile`` in the current choice (the price search counts
        gap markers at their longest)."""
        size = profile.cost + profile.prefix[profile.shown]
        for arr in profile.arrays:
            size += 1  # "[" and "]" less the comma counted per element
            previous = -1
            for i in arr.kept:
                if i - previous > 1:
                    size += gap_size(previous + 1, i - 1) + 1
                size += self._size(arr.items[i]) + 1
                previous = i
            size += gap_size(previous + 1, arr.n - 1) + (previous < arr.n - 1)
        return size

    def top_up(self, room: int) -> None:
        """Spend ``room``, what the priced copy left: cut strings shown whole and more items, most
        values per character first (a heap; an entry whose worth fell since it was pushed is looked
        at again later)."""
        self.room = room
        if self._sizes_for != (self.price, self._relaxed):  # (a refill at the same price keeps them)
            self._item_sizes = {}
            self._sizes_for = (self.price, self._relaxed)
        self._offer_profile(self.top)
        heap = self.heap
        for _ in range(512):  # (heap entries looked at, at most)
            if not heap:
                return
            _, _, offer = heapq.heappop(heap)
            now = self._measure(offer)
            if now is None:
                continue
            delta, value = now
            if delta > self.room:
                continue  # the room only shrinks: it never fits later
            ratio = value / max(delta, 1)
            if heap and -ratio > heap[0][0] + 1e-12:
                self._push(offer, ratio)
                continue
            self.room -= delta
            self._apply(offer)

    def _push(self, offer: _Offer, ratio: float) -> None:
        self.pushed += 1
        heapq.heappush(self.heap, (-ratio, self.pushed, offer))

    def _offer_item(self, arr: _Array, i: int) -> None:
        """Offer item ``i`` of ``arr`` both ways: as priced, and with its strings cut and its arrays
        folded. (The gaps around ``i`` are measured once for the two.)"""
        item = arr.items[i]
        gaps: int | None = None
        measured = False
        size, value = self._item_size(item, True)
        if value:
            gaps, measured = self._gaps(arr, i), True
            if gaps is None:
                return  # kept already: neither way applies
            if size + gaps <= self.room:
                self._push((None, arr, i, True), value / max(size + gaps, 1))
        if item.arrays or item.whole_at(self.price):  # (else both ways are the same copy)
            size, value = self._item_size(item, False)
            if not value:
                return
            if not measured:
                gaps = self._gaps(arr, i)
            if gaps is not None and size + gaps <= self.room:
                self._push((None, arr, i, False), value / max(size + gaps, 1))

    def _offer_profile(self, profile: _Profile) -> None:
        """Offer what ``profile`` (shown) and the kept items below it could still show."""
        stack = [profile]
        while stack:
            current = stack.pop()
            k = current.shown  # (its next cut string)
            if k < len(current.order):
                size = current.extra[current.order[k]]
                if size <= self.room:
                    self._push((current, None, -1, False), 1 / max(size, 1))
            for arr in current.arrays:
                kept = set(arr.kept)
                for i in arr.positions:
                    if i in kept:
                        stack.append(arr.items[i])
                    else:
                        self._offer_item(arr, i)

    def _measure(self, offer: _Offer) -> tuple[int, int] | None:
        """(characters, verbatim values) ``offer`` adds now; None when it no longer applies."""
        profile, arr, i, priced = offer
        if arr is None:
            assert profile is not None
            k = profile.shown
            return None if k >= len(profile.order) else (profile.extra[profile.order[k]], 1)
        size, value = self._item_size(arr.items[i], priced)
        if not value:
            return None
        gaps = self._gaps(arr, i)
        return None if gaps is None else (size + gaps, value)

    def _item_size(self, item: _Profile, priced: bool) -> tuple[int, int]:
        """(characters, verbatim values) of an item as priced, or folded (its strings cut, its arrays
        folded); remembered while the price is the same."""
        key = id(item) if priced else -id(item)
        found = self._item_sizes.get(key)
        if found is None:
            if priced:  # as chosen at the price found
                found = self.score(item, self.price, False)[1:]
            else:  # every string cut, every array inside folded
                found = (item.cost + sum(2 + gap_size(0, inner.n - 1) for inner in item.arrays), item.value)
            self._item_sizes[key] = found
        return found

    @staticmethod
    def _gaps(arr: _Array, i: int) -> int | None:
        """The characters the gap markers around position ``i`` gain when item ``i`` is kept; None when
        it is kept already."""
        kept = arr.kept
        pos = bisect_left(kept, i)
        if pos < len(kept) and kept[pos] == i:
            return None
        a = kept[pos - 1] + 1 if pos else 0
        b = kept[pos] - 1 if pos < len(kept) else arr.n - 1
        # the gap markers' sizes, as gap_size counts them (inlined: the top-up measures thousands)
        left = right = 0
        if i > a:
            left = 14 + len(str(a)) if i - 1 == a else 15 + len(str(a)) + len(str(i - 1))
        if b > i:
            right = 14 + len(str(b)) if b == i + 1 else 15 + len(str(i + 1)) + len(str(b))
        whole = 14 + len(str(a)) if a == b else 15 + len(str(a)) + len(str(b))
        return left + right - whole + (left > 0) + (right > 0)

    def _apply(self, offer: _Offer) -> None:
        profile, arr, i, priced = offer
        if arr is None:
            assert profile is not None
            profile.shown += 1
            now = self._measure(offer)  # its next cut string
            if now is not None and now[0] <= self.room:
                self._push(offer, now[1] / max(now[0], 1))
            return
        arr.kept.insert(bisect_left(arr.kept, i), i)
        item = arr.items[i]
        if priced:
            self.score(item, self.price, True)
        else:
            item.shown = 0
            for inner in item.arrays:
                inner.kept = []
        self._offer_profile(item)
        at = bisect_left(arr.positions, i)
        for j in arr.positions[max(at - 1, 0) : at + 2]:  # neighbours: their gap changed
            if j != i:
                self._offer_item(arr, j)

    def render(self) -> Condensed:
        """The chosen copy. It walks the document as ``_walk`` did, so each array and each cuttable
        string meets its own entry in its profile (in document order, not by ``id()``)."""
        out = Condensed(None, strategy="priced")
        out.value = self._build(self.root, 0, self._at(self.top), out)
        out.size = self._size(self.top)  # exact: the tests hold it against the rendered copy
        return out

    def _build(self, node: object, depth: int, at: _At, out: Condensed) -> object:
        """``node`` as ``render`` shows it, counted on ``out``. (A method, not a closure: a nested
        function that calls itself is a reference cycle, which kept the packing for the collector.)"""
        build = self._build
        head = at.profile.head
        t = type(node)
        if t is str:
            text: str = node  # type: ignore[assignment]
            if len(text) <= head + STRING_SLACK:
                out.intact += 1
                return text
            index = at.strings
            at.strings += 1
            if index in at.whole:
                out.intact += 1
                return text
            out.strings_truncated += 1
            return cut(text, head)
        if t is dict:
            mapping: dict[str, object] = node  # type: ignore[assignment]
            n = len(mapping)
            if n and depth >= MAX_DEPTH:
                out.keys_omitted += n
                note_dropped(out.dropped, mapping)
                return collapsed_keys(n)
            # (leaves shown as they are inline: no call for most members of most records)
            whole = head + STRING_SLACK
            copy: dict[str, object] = {}
            intact = 0
            for key, child in mapping.items():
                kind = type(child)
                if kind is str:
                    if len(child) <= whole:  # type: ignore[arg-type]
                        intact += 1
                        copy[key] = child
                        continue
                elif kind is not dict and kind is not list:
                    intact += 1
                    copy[key] = child
                    continue
                copy[key] = build(child, depth + 1, at, out)
            out.intact += intact
            return copy
        if t is list:
            items: list[object] = node  # type: ignore[assignment]
            n = len(items)
            if not n:
                return []
            if depth >= MAX_DEPTH:
                out.items_omitted += n
                return collapsed_items(n)
            arr = at.profile.arrays[at.arrays]
            at.arrays += 1
            shown: list[object] = []
            previous = -1
            for i in arr.kept:
                if i - previous > 1:
                    shown.append(gap_text(previous + 1, i - 1))
                shown.append(build(items[i], depth + 1, self._at(arr.items[i]), out))
                previous = i
            if previous < n - 1:
                shown.append(gap_text(previous + 1, n - 1))
            out.items_omitted += n - len(arr.kept)
            return shown
        out.intact += 1
        return node

    def _at(self, profile: _Profile) -> _At:
        return _At(profile, set(profile.order[: profile.shown]))


@dataclass(slots=True)
class _At:
    """Where ``render`` is in one profile: its next array and next cuttable string."""

    profile: _Profile
    whole: set[int]  # indexes of the cuttable strings shown whole
    arrays: int = 0
    strings: int = 0


def _cover(node: list[object], order: list[int], needed: set[str]) -> list[tuple[int, set[str]]]:
    """Few items of ``node`` that together show every name of ``needed`` they can (largest first,
    taken from the candidates met in ``order`` until they show them all); ``needed`` loses them."""
    candidates: list[tuple[int, set[str]]] = []
    union: set[str] = set()
    for i in order:
        item = node[i]
        if type(item) is dict or type(item) is list:
            new = deep_keys(item) & needed
            if new and not union.issuperset(new):
                candidates.append((i, new))
                union |= new
                if union >= needed:
                    break
    chosen: list[tuple[int, set[str]]] = []
    while candidates and needed:
        best = max(range(len(candidates)), key=lambda k: len(candidates[k][1] & needed))
        i, new = candidates.pop(best)
        new &= needed
        if not new:
            break
        chosen.append((i, new))
        needed -= new
    return chosen


def priced(root: object, target: int, plans: Plans) -> Condensed | None:
    """The priced copy of ``root`` within ``target`` characters; None when the items that must stay
    do not fit, or ``root`` is no container."""
    if type(root) is not dict and type(root) is not list:
        return None
    packing = plans.priced
    if not isinstance(packing, Priced) or packing.root is not root or target > packing.target * 5 // 4:
        packing = plans.priced = Priced(root, target, plans)
    else:  # a retry at about the same target: the horizons still hold
        packing.target, packing.hint = target, packing.price
    return packing.run()
