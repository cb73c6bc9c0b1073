"""The limit search: a condensed copy under one set of limits for the whole document.

It builds a smaller copy of a parsed document under limits (per-string length, per-array items,
per-object keys, depth) and searches those limits for the copy that keeps the most leaf values
verbatim within a character target. Each trial copy is built with a running size estimate and
abandoned as soon as it is over the target, so a trial costs about as much as the preview it would
produce, not the document. It is the baseline the priced packing (``_priced``) must beat, and the
only condenser for documents whose root is not a container.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Final

from mcpsqueeze.shrink._copy import (
    MAX_DEPTH,
    STRING_SLACK,
    UNLIMITED,
    Condensed,
    Limits,
    Plans,
    collapsed_items,
    collapsed_keys,
    cut,
    gap_size,
    gap_text,
    leaf_size,
    note_dropped,
    str_size,
)

__all__ = ["Limits", "limit_search"]


class _Overflow(Exception):
    """A trial copy grew past its target; the trial is abandoned."""


_GAP_ITEMS: Final = 2  # an array is only sampled when that omits more items than this


@dataclass(slots=True)
class _Builder:
    limits: Limits
    limit: int
    plans: Plans
    size: int = 0
    intact: int = 0
    items_omitted: int = 0
    keys_omitted: int = 0
    strings_truncated: int = 0
    dropped: dict[str, None] = field(default_factory=dict)
    longest_list: int = 0
    longest_string: int = 0
    sampled_longest: int = 0
    sampled_shortest: int = UNLIMITED
    bonus: int = 0  # the sampled arrays still to keep one item more (from ``Limits.bonus``)

    def _drop_keys(self, keys: list[str]) -> None:
        self.keys_omitted += len(keys)
        note_dropped(self.dropped, keys)

    def value(self, node: object, depth: int) -> object:
        t = type(node)
        if t is str:
            text: str = node  # type: ignore[assignment]
            head = self.limits.strings
            self.longest_string = max(self.longest_string, len(text))
            if len(text) > head + STRING_SLACK:
                text = cut(text, head)
                self.strings_truncated += 1
            else:
                self.intact += 1
            self.size += str_size(text)
            return text
        if t is dict:
            return self.obj(node, depth)  # type: ignore[arg-type]
        if t is list:
            return self.array(node, depth)  # type: ignore[arg-type]
        self.size += leaf_size(node)
        self.intact += 1
        return node

    def obj(self, node: dict[str, object], depth: int) -> object:
        limits = self.limits
        n = len(node)
        if n and depth >= limits.depth:
            marker = collapsed_keys(n)
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
                self.size += str_size(key) + 1
                out[key] = value(node[key], depth + 1)
            self._drop_keys(names[keep:])
            marker_key = "…" if "…" not in node else "…more"
            out[marker_key] = f"[{n - keep} more keys]"
            self.size += 12 + len(str(n - keep)) + len(marker_key)
        else:
            for key, child in node.items():
                self.size += str_size(key) + 1
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
            marker = collapsed_items(n)
            self.size += len(marker) + 2
            self.items_omitted += n
            return marker
        # (per mille: arrays of up to 6 items stay whole, a gap marker would cost as much as their items)
        keep_n = max((n * limits.items + 999) // 1000, 6) if limits.share else limits.items
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
            plan = self.plans.ordered(node)[0]
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
        self.size += gap_size(first, last) + 1
        return gap_text(first, last)


def _trial(root: object, limits: Limits, target: int, plans: Plans) -> Condensed | None:
    builder = _Builder(limits, target, plans, bonus=limits.bonus)
    try:
        value = builder.value(root, 0)
    except _Overflow:
        return None
    if builder.size > target:
        return None
    return Condensed(
        value,
        builder.intact,
        builder.items_omitted,
        builder.keys_omitted,
        builder.strings_truncated,
        builder.dropped,
        size=builder.size,
        longest_list=builder.longest_list,
        longest_string=builder.longest_string,
        uneven=builder.sampled_longest * 2 >= builder.sampled_shortest * 3,
        limits=limits,
    )


_STRING_STEPS: Final = (UNLIMITED, 2000, 500, 200, 80, 32, 8)


def _best_items(
    root: object, strings: int, keys: int, depth: int, target: int, plans: Plans, share: bool
) -> tuple[Condensed, int] | None:
    """The copy with (nearly) the most array items that fits ``target``, and its item limit: a count
    per array, or with ``share`` a per-mille of each array.

    The preview's size grows about linearly with the limit, so each guess extrapolates from the
    largest copy that fitted; guesses that overflow bound the search from above.
    """
    best = _trial(root, Limits(strings, 1, keys, depth, share), target, plans)
    lo, hi = 1, 1001 if share else UNLIMITED  # lo fits; hi does not
    if best is None:
        best, lo, hi = _trial(root, Limits(strings, 0, keys, depth, share), target, plans), 0, 0
        if best is None:
            return None
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
    parts: list[str] = []  # the strategy's name: the limits that cut something
    if lo < (1000 if share else best.longest_list):
        parts.append(f"items={lo / 10:g}%" if share else f"items={lo}")
    if strings < UNLIMITED:
        parts.append(f"strings={strings}")
    if depth < MAX_DEPTH:
        parts.append(f"depth={depth}")
    if keys < UNLIMITED:
        parts.append(f"keys={keys}")
    best.strategy = ",".join(parts) or "compact"
    return best, lo


def limit_search(root: object, target: int, plans: Plans) -> Condensed | None:
    """The copy of ``root`` under the limits that keep the most verbatim leaves within ``target``
    (estimated serialized characters), or None when not even the smallest copy fits. ``plans``
    keeps the array orders and the limits that won, so that a retry at a slightly different target
    redoes only those."""
    memo = plans.limits  # a retry at a slightly different target: redo only what won
    if memo is not None:
        result = _best_items(root, memo.strings, memo.keys, memo.depth, target, plans, share=memo.share)
        if result is not None:
            return _fill(root, result[0], target, plans)
        plans.limits = None
    for depth, keys in ((MAX_DEPTH, UNLIMITED), (8, 32), (3, 8), (1, 0)):
        found: list[Condensed] = []
        longest_string = UNLIMITED
        for strings in _STRING_STEPS:
            if strings < UNLIMITED and strings + STRING_SLACK >= longest_string:
                continue  # cutting at this length would not change the copy
            result = _best_items(root, strings, keys, depth, target, plans, share=False)
            if result is None:
                continue
            trial, items = result
            if items:  # a copy without items has not seen the strings inside them
                longest_string = trial.longest_string
            found.append(trial)
            if trial.uneven:
                shared = _best_items(root, strings, keys, depth, target, plans, share=True)
                if shared is not None:
                    found.append(shared[0])
            if len(found) > 2 and max(t.intact for t in found[-2:]) < max(t.intact for t in found[:-2]):
                break  # cutting strings harder has stopped paying off
        if found:
            # The most verbatim values; among copies within 3% of that, the one with longest strings.
            most = max(t.intact for t in found)
            chosen = max(
                (t for t in found if t.intact >= most * 0.97),
                key=lambda t: (-t.strings_truncated, t.intact),
            )
            plans.limits = chosen.limits
            return _fill(root, chosen, target, plans)
    return None


def _fill(root: object, best: Condensed, target: int, plans: Plans) -> Condensed:
    """Spend what is left of ``target`` on one more item for as many sampled arrays as fit."""
    limits = best.limits
    if limits is None or limits.share or best.items_omitted == 0:
        return best
    strategy = best.strategy
    lo, hi = 0, UNLIMITED  # that many bonus items fit / do not
    while hi - lo > 1:
        guess = lo * 2 + 1 if hi == UNLIMITED else (lo + hi) // 2
        trial = _trial(root, replace(limits, bonus=guess), target, plans)
        if trial is None:
            hi = guess
        else:
            lo, best = guess, trial
            if trial.items_omitted == 0:
                break
    best.strategy = f"{strategy},+1 item in {lo} arrays" if lo else strategy  # (a trial names none)
    return best
