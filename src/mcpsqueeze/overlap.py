"""Overlap: show a result that largely repeats an earlier one as what changed since that call.

Pure (data in, text out; no I/O): the dedup stage in `stages.py` keeps the session's earlier results,
picks the one to compare with, stores the complete original and decides whether the delta is shown.

Text is compared line by line (a `difflib` unified diff naming both calls). JSON is compared as data:
objects by key, arrays by item identity (a shared identifying field such as ``name`` or ``id`` when
every item has one, else a stable hash of each item), so an entity that gained one observation reads
as one change, not as a re-sent graph.
"""

from __future__ import annotations

import difflib
import hashlib
import json
from collections import Counter
from dataclasses import dataclass
from typing import Any, Literal

from ._jsonbytes import dumps, loads

__all__ = [
    "MAX_RATIO",
    "MIN_CHARS",
    "Delta",
    "json_changes",
    "json_changes_within",
    "line_overlap",
    "overlap_delta",
    "text_diff",
]

#: Results shorter than this are shown as they are: a delta would save too little to be worth reading.
MIN_CHARS = 1_000
#: A delta is shown only when it is at most this share of the result's characters.
MAX_RATIO = 0.5
#: Fields that name an item of an array, tried in this order (the first one every item has wins).
IDENTITY_KEYS = ("id", "name", "key", "uri", "path", "sha", "hash", "number", "title")
#: Beyond this many characters a result is not diffed (difflib's worst case is quadratic).
MAX_DIFF_CHARS = 2_000_000


@dataclass(frozen=True)
class Delta:
    """What changed between two results: ``body`` is shown instead of the new result."""

    kind: str  # "text" (a unified diff) or "json" (added / removed / changed items)
    body: str
    unchanged: int  # lines (text) or items (json) the two share
    total: int  # lines (text) or items (json) in the new result


def line_overlap(old: str, new: str) -> float:
    """The share of the new text's lines that also occur in the old one (a cheap test before diffing)."""
    new_lines = new.splitlines()
    if not new_lines:
        return 0.0
    old_counts = Counter(old.splitlines())
    shared = 0
    for line in new_lines:
        if old_counts[line] > 0:
            old_counts[line] -= 1
            shared += 1
    return shared / len(new_lines)


_Op = tuple[Literal["replace", "delete", "insert", "equal"], int, int, int, int]


class _Trimmed(difflib.SequenceMatcher[str]):
    """Opcodes computed on the lines between the common head and tail only.

    Re-reads differ in a few places; trimming first makes the usual case linear, and difflib's junk
    heuristic (on) keeps very repetitive texts from its quadratic worst case."""

    def __init__(self, old: list[str], new: list[str]) -> None:
        head = 0
        limit = min(len(old), len(new))
        while head < limit and old[head] == new[head]:
            head += 1
        tail = 0
        while tail < limit - head and old[-1 - tail] == new[-1 - tail]:
            tail += 1
        super().__init__(None, old[head : len(old) - tail], new[head : len(new) - tail], autojunk=True)
        middle: list[_Op] = [
            (tag, i1 + head, i2 + head, j1 + head, j2 + head) for tag, i1, i2, j1, j2 in super().get_opcodes()
        ]
        opcodes: list[_Op] = [("equal", 0, head, 0, head)] if head else []
        opcodes += [op for op in middle if op[1] != op[2] or op[3] != op[4]]
        if tail:
            opcodes.append(("equal", len(old) - tail, len(old), len(new) - tail, len(new)))
        merged: list[_Op] = []
        for op in opcodes:  # adjacent equal runs as one, as difflib's own opcodes are
            if merged and op[0] == "equal" == merged[-1][0]:
                last = merged.pop()
                op = ("equal", last[1], op[2], last[3], op[4])
            merged.append(op)
        self._opcodes = merged
        self.a, self.b = old, new

    def get_opcodes(self) -> list[_Op]:
        return self._opcodes


def _range(start: int, stop: int) -> str:
    """A unified-diff range, as difflib writes it."""
    length = stop - start
    beginning = start + 1 if length else start
    return str(beginning) if length == 1 else f"{beginning},{length}"


def text_diff(old: str, new: str, old_label: str, new_label: str) -> tuple[str, int, int]:
    """A unified diff (3 lines of context) from `old` to `new`, with the lines unchanged and the total."""
    old_lines = old.splitlines(keepends=True)
    new_lines = new.splitlines(keepends=True)
    matcher = _Trimmed(old_lines, new_lines)
    unchanged = sum(i2 - i1 for tag, i1, i2, _, _ in matcher.get_opcodes() if tag == "equal")
    out: list[str] = []

    def put(prefix: str, line: str) -> None:
        out.append(
            prefix + line if line.endswith("\n") else prefix + line + "\n\\ No newline at end of file\n"
        )

    for group in matcher.get_grouped_opcodes(3):
        if not out:
            out.append(f"--- {old_label}\n+++ {new_label}\n")
        first, last = group[0], group[-1]
        out.append(f"@@ -{_range(first[1], last[2])} +{_range(first[3], last[4])} @@\n")
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                for line in old_lines[i1:i2]:
                    put(" ", line)
                continue
            for line in old_lines[i1:i2]:
                put("-", line)
            for line in new_lines[j1:j2]:
                put("+", line)
    return "".join(out), unchanged, len(new_lines)


def _digest(value: Any) -> str:
    return hashlib.sha256(dumps(value, sort_keys=True)).hexdigest()


def _ident(value: str | int) -> tuple[bool, str | int]:
    """An item's name as a key: 1 and "1" are different names (as their JSON is)."""
    return (isinstance(value, str), value)


def _same(old: Any, new: Any) -> bool:
    """The same JSON value (same canonical bytes). Python's == first: values it calls different (nearly
    every changed member) then cost no serialisation, and equal ones (1 == 1.0 == True) are confirmed."""
    return old == new and _digest(old) == _digest(new)


def _identity_key(old: list[Any], new: list[Any]) -> str | None:
    items = [*old, *new]
    if not items or not all(isinstance(item, dict) for item in items):
        return None
    for key in IDENTITY_KEYS:
        values = [item.get(key) for item in items]
        if not all(isinstance(v, (str, int)) and not isinstance(v, bool) for v in values):
            continue
        unique_old = len({_ident(item[key]) for item in old}) == len(old)
        if unique_old and len({_ident(item[key]) for item in new}) == len(new):
            return key
    return None


def _pointer(path: str, part: str | int) -> str:
    return f"{path}/{str(part).replace('~', '~0').replace('/', '~1')}"


class _TooBig(Exception):
    """The changes found so far already take more characters than the delta may."""


class _Changes:
    def __init__(self, limit: int | None = None) -> None:
        self.added: list[dict[str, Any]] = []
        self.removed: list[dict[str, Any]] = []
        self.changed: list[dict[str, Any]] = []
        self.unchanged = 0
        self.total = 0
        self.limit = limit
        self.size = 0  # characters of the values added or changed so far (compact JSON, a lower bound)

    def _grow(self, path: str, value: Any) -> None:
        if self.limit is None:
            return
        self.size += len(path) + len(dumps(value).decode("utf-8", "surrogatepass"))  # characters
        if self.size > self.limit:
            raise _TooBig

    def compare(self, old: Any, new: Any, path: str) -> None:
        if isinstance(old, dict) and isinstance(new, dict):
            for key, value in new.items():
                self.total += 1
                if key not in old:
                    self.added.append({"path": _pointer(path, key), "value": value})
                    self._grow(path, value)
                elif _same(old[key], value):
                    self.unchanged += 1
                else:
                    self.compare(old[key], value, _pointer(path, key))
            for key in old:
                if key not in new:
                    self.removed.append({"path": _pointer(path, key)})
        elif isinstance(old, list) and isinstance(new, list):
            self._compare_lists(old, new, path)
        else:
            self.changed.append({"path": path, "value": new})
            self._grow(path, new)

    def _compare_lists(self, old: list[Any], new: list[Any], path: str) -> None:
        key = _identity_key(old, new)
        if key is not None:  # items named by a field: a changed item is compared inside
            by_id = {_ident(item[key]): (i, item) for i, item in enumerate(old)}
            seen: set[tuple[bool, str | int]] = set()
            for i, item in enumerate(new):
                self.total += 1
                ident = _ident(item[key])
                seen.add(ident)
                if ident not in by_id:
                    self.added.append({"path": _pointer(path, i), "value": item})
                    self._grow(path, item)
                elif _same(by_id[ident][1], item):
                    self.unchanged += 1
                else:
                    self.compare(by_id[ident][1], item, _pointer(path, i))
            for ident, (i, _item) in by_id.items():
                if ident not in seen:
                    self.removed.append({"path": _pointer(path, i), key: ident[1]})
            return
        # items without a name: by a stable hash of each item (a multiset, so duplicates count)
        left = Counter(_digest(item) for item in old)
        for i, item in enumerate(new):
            self.total += 1
            digest = _digest(item)
            if left[digest] > 0:
                left[digest] -= 1
                self.unchanged += 1
            else:
                self.added.append({"path": _pointer(path, i), "value": item})
                self._grow(path, item)
        for i, item in enumerate(old):
            digest = _digest(item)
            if left[digest] > 0:
                left[digest] -= 1
                self.removed.append({"path": _pointer(path, i)})


def json_changes(old: Any, new: Any) -> tuple[dict[str, Any], int, int]:
    """Added, removed and changed members from `old` to `new` (JSON pointers into the new / old value).

    Returns the changes (only the non-empty lists), the members unchanged and the members compared."""
    found = json_changes_within(old, new, None)
    assert found is not None
    return found


def json_changes_within(old: Any, new: Any, limit: int | None) -> tuple[dict[str, Any], int, int] | None:
    """`json_changes`, or None as soon as the added and changed values alone take more than `limit`
    characters: no such delta is shown, so the rest of the comparison would be wasted (two different
    200 KB results took ~40 ms to compare in full)."""
    changes = _Changes(limit)
    try:
        changes.compare(old, new, "")
    except _TooBig:
        return None
    out = {
        name: items
        for name, items in (
            ("added", changes.added),
            ("removed", changes.removed),
            ("changed", changes.changed),
        )
        if items
    }
    return out, changes.unchanged, changes.total


def _as_json(text: str) -> Any:
    stripped = text.lstrip()
    if not stripped or stripped[0] not in "[{":
        return None
    try:
        value = loads(text.encode("utf-8", "surrogatepass"))  # orjson: a 200 KB result in a third the time
    except (ValueError, RecursionError):
        try:
            value = json.loads(text)  # what strict parsing refuses (NaN, Infinity) still compares as JSON
        except (ValueError, RecursionError):
            return None
    return value if isinstance(value, (dict, list)) else None


def overlap_delta(
    old: str, new: str, old_label: str, new_label: str, limit: int | None = None
) -> Delta | None:
    """What changed from `old` to `new`, or None when they are too different for a delta to help.

    JSON containers are compared as data; anything else as lines. The caller decides whether the
    delta is small enough to show (see `MAX_RATIO`); a caller that gives its `limit` (characters; at most
    `MAX_RATIO` of the new text counts) gets None as soon as the delta is sure to be longer, before the
    comparison is finished or the diff made."""
    if old == new or len(new) < MIN_CHARS or max(len(old), len(new)) > MAX_DIFF_CHARS:
        return None
    most = None if limit is None else min(limit, int(MAX_RATIO * len(new)))
    old_json, new_json = _as_json(old), _as_json(new)
    if old_json is not None and new_json is not None and type(old_json) is type(new_json):
        found = json_changes_within(old_json, new_json, most)
        if found is None:
            return None
        changes, unchanged, total = found
        if total == 0 or unchanged == 0:
            return None
        body = json.dumps({"compared_with": old_label, **changes}, ensure_ascii=False, indent=1)
        return Delta("json", body, unchanged, total)
    if most is not None and abs(len(old) - len(new)) > most:  # a diff lists every removed and added line
        return None
    if line_overlap(old, new) < 1 - MAX_RATIO:
        return None
    body, unchanged, total = text_diff(old, new, old_label, new_label)
    if not body or unchanged < (1 - MAX_RATIO) * total:  # (difflib's junk heuristic found too little)
        return None
    return Delta("text", body, unchanged, total)
