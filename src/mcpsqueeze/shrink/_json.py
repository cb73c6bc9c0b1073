"""Strict JSON reading and writing, and the JSON condenser.

The condenser builds a smaller copy of a parsed document under a set of limits (per-string length,
per-array items, per-object keys, depth) and searches those limits for the copy that keeps the most
leaf values verbatim within a character target. Each trial copy is built with a running size
estimate and abandoned as soon as it is over the target, so a trial costs about as much as the
preview it would produce, not the document.
"""

from __future__ import annotations

import json
import math
import re
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
            if covered.issuperset(item) and not _containers(item.values()):
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
        cut = f"{text[:head]}…[+{len(text) - head} chars]"
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
        self.size += 1 + n
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
        self.size += 1 + n if whole else 1 + keep_n
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
        count = last - first + 1
        marker = f"…[{count} items omitted: {first}-{last}]" if count > 1 else f"…[item {first} omitted]"
        self.size += len(marker) + 3
        return marker


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
_STRING_STEPS: Final = (_UNLIMITED, 2000, 500, 200, 80, 32)


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
            return _fill(root, chosen, target, plans)
    return None


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
