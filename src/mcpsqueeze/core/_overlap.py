"""Overlap: show a result that largely repeats an earlier one as what changed since that call. Pure.

Text is compared line by line (a unified diff naming both calls); JSON as data: objects by key, arrays
by item identity (a field every item has, such as ``name`` or ``id``, else a hash of each item), so an
entity that gained one observation reads as one change. The dedup stage picks the earlier result,
stores the original and decides whether the delta is shown."""

from __future__ import annotations

import contextlib
import difflib
import json
import sys
from collections import Counter
from dataclasses import dataclass
from itertools import repeat
from typing import Any, Final, Literal

import orjson

from .._jsonbytes import NOT_JSON, dumps, parse_kept
from ._dedup import content_digest

__all__ = ["MAX_RATIO", "MIN_CHARS", "Delta", "json_changes", "line_overlap", "overlap_delta", "text_diff"]

#: Results shorter than this are shown as they are: a delta would save too little to be worth reading.
MIN_CHARS = 1_000
#: A delta is shown only when it is at most this share of the result's characters.
MAX_RATIO = 0.5
#: Fields that name an item of an array, tried in this order (the first one every item has wins).
IDENTITY_KEYS = ("id", "name", "key", "uri", "path", "sha", "hash", "number", "title")
#: Beyond this many characters a result is not diffed (difflib's worst case is quadratic).
MAX_DIFF_CHARS = 2_000_000
#: A limited comparison of named arrays this long first compares a sample of their items, evenly spread,
#: and gives up when at least 3/4 of the sample changed and its changes, scaled to the whole array, write
#: more than _PROBE_MARGIN times the limit (a 200 KB result unlike the last one: 16 items compared instead
#: of ~80). Shorter arrays, and unlimited comparisons, are compared in full.
_PROBE_MIN = 256
_PROBE_ITEMS = 16
_PROBE_MARGIN = 4


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
    # each line of the new text that has an unmatched twin in the old one: per distinct line, the fewer
    # of its two counts (counted and summed in C, not matched line by line)
    old_counts, new_counts = Counter(old.splitlines()), Counter(new_lines)
    both = new_counts.keys() & old_counts.keys()
    shared = sum(map(min, map(new_counts.__getitem__, both), map(old_counts.__getitem__, both)))
    return shared / len(new_lines)


_Op = tuple[Literal["replace", "delete", "insert", "equal"], int, int, int, int]


class _Trimmed(difflib.SequenceMatcher[str]):
    """Opcodes of the lines between the common head and tail only: re-reads differ in a few places, so the
    usual case is linear (difflib's junk heuristic keeps repetitive texts from its quadratic worst case)."""

    def __init__(self, old: list[str], new: list[str]) -> None:
        head = 0
        limit = min(len(old), len(new))
        while head < limit and old[head] == new[head]:
            head += 1
        tail = 0
        while tail < limit - head and old[-1 - tail] == new[-1 - tail]:
            tail += 1
        super().__init__(None, old[head : len(old) - tail], new[head : len(new) - tail], autojunk=True)
        # The middle neither starts nor ends with an equal run (head and tail are the longest), so the three
        # join as difflib's own opcodes do: no two equal runs side by side.
        opcodes: list[_Op] = [("equal", 0, head, 0, head)] if head else []
        opcodes += [
            (tag, i1 + head, i2 + head, j1 + head, j2 + head) for tag, i1, i2, j1, j2 in super().get_opcodes()
        ]
        if tail:
            opcodes.append(("equal", len(old) - tail, len(old), len(new) - tail, len(new)))
        self._opcodes = opcodes
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


def _same(old: Any, new: Any) -> bool:
    """Whether the two values write the same canonical JSON: ``==`` first, at C speed, then the canonical
    text for equal ones (``1 == 1.0 == True`` and ``0.0 == -0.0`` write differently)."""
    if old is new:
        return True
    kind = type(old)
    if kind is not type(new) or old != new:
        return False
    if kind is float:
        return repr(old) == repr(new)
    if kind is dict or kind is list:
        return dumps(old, sort_keys=True) == dumps(new, sort_keys=True)
    return True  # str, int, bool, None: equal is the same JSON


def _identity_key(old: list[Any], new: list[Any]) -> tuple[str, list[Any], list[Any]] | None:
    """The field that names every item of both arrays uniquely, with each item's name as a key (``"1"``
    and ``1`` kept apart when both occur)."""
    if (
        not (old or new)
        or not _ONLY_DICT.issuperset(map(type, old))
        or not _ONLY_DICT.issuperset(map(type, new))
    ):
        return None
    for key in IDENTITY_KEYS:  # (C-speed passes: a 200 KB result's arrays hold hundreds of items)
        old_names = list(map(dict.get, old, repeat(key)))
        new_names = list(map(dict.get, new, repeat(key)))
        kinds = set(map(type, old_names)) | set(map(type, new_names))
        if not kinds <= {str, int}:
            continue
        if len(kinds) > 1:
            old_names = [(type(v) is str, v) for v in old_names]
            new_names = [(type(v) is str, v) for v in new_names]
        if len(set(old_names)) == len(old_names) and len(set(new_names)) == len(new_names):
            return key, old_names, new_names
    return None


_ONLY_DICT: Final = frozenset((dict,))


class _TooLong(Exception):
    """The changes found so far already write more than the delta may be: no delta is shown."""


def _pointer(path: str, part: str | int) -> str:
    if isinstance(part, str):  # a key (an index needs no escape)
        part = part.replace("~", "~0").replace("/", "~1")
    return f"{path}/{part}"


class _Changes:
    def __init__(self, limit: int | None = None) -> None:
        self.added: list[dict[str, Any]] = []
        self.removed: list[dict[str, Any]] = []
        self.changed: list[dict[str, Any]] = []
        self.unchanged = 0
        self.total = 0
        # A lower bound on the characters the changes write, and the bound past which comparing stops.
        # Each entry counts its path and value as compact JSON, and less than its indented frame: the
        # body is written with indent=1, which adds at least two characters around every member and
        # element, more than orjson ever writes a float longer than the stdlib (``0.00001``, ``1e-05``).
        self._written = 0
        self._stop = limit

    def _keep(self, into: list[dict[str, Any]], path: str, /, **member: Any) -> None:
        """Keep one change at `path` in `into` (`member`: its value, or a removed item's name), counting
        what it writes: `_TooLong` past the limit."""
        into.append({"path": path, **member})
        if self._stop is None:
            return
        self._written += len(path) + 14  # ' {\n  "path": "",\n }' at least
        for value in member.values():
            if type(value) is str:  # written quoted, escapes only adding: a lower bound without writing it
                self._written += 12 + len(value)  # ',\n  "value": ' and the quotes
            else:
                # characters as the body writes them (not ASCII-escaped), so the UTF-8 decoded; what
                # orjson refuses (the stdlib writes it) is not counted: still a lower bound
                with contextlib.suppress(TypeError):
                    self._written += 10 + len(orjson.dumps(value).decode())  # ',\n  "value": '
        if self._written > self._stop:
            raise _TooLong

    def compare(self, old: Any, new: Any, path: str) -> None:
        if type(old) is dict and type(new) is dict:
            for key, value in new.items():
                self.total += 1
                if key not in old:
                    self._keep(self.added, _pointer(path, key), value=value)
                elif _same(old[key], value):
                    self.unchanged += 1
                else:
                    self.compare(old[key], value, _pointer(path, key))
            for key in old:
                if key not in new:
                    self._keep(self.removed, _pointer(path, key))
        elif type(old) is list and type(new) is list:
            self._compare_lists(old, new, path)
        else:
            self._keep(self.changed, path, value=new)

    def _probe(self, by_id: dict[Any, tuple[int, Any]], names: list[Any], new: list[Any], path: str) -> None:
        """Raise ``_TooLong`` when a sample of ``new``'s items already shows that the changes are far
        longer than the limit (see ``_PROBE_MIN``)."""
        assert self._stop is not None
        trial = _Changes(sys.maxsize)  # counts what the sample writes, never stops
        changed = 0
        for k in range(_PROBE_ITEMS):
            i = k * len(new) // _PROBE_ITEMS
            earlier = by_id.get(names[i])
            if earlier is None:
                trial._keep(trial.added, _pointer(path, i), value=new[i])
            elif _same(earlier[1], new[i]):
                continue
            else:
                trial.compare(earlier[1], new[i], _pointer(path, i))
            changed += 1
        # (only when nearly every sampled item changed: changes that fall on the sample's positions
        # by chance never pass for a document changed throughout)
        if (
            changed * 4 >= _PROBE_ITEMS * 3
            and trial._written * len(new) > _PROBE_MARGIN * self._stop * _PROBE_ITEMS
        ):
            raise _TooLong

    def _compare_lists(self, old: list[Any], new: list[Any], path: str) -> None:
        named = _identity_key(old, new)
        if named is not None:  # items named by a field: a changed item is compared inside
            key, old_names, new_names = named
            by_id = dict(zip(old_names, enumerate(old), strict=True))  # (names unique: one (i, item) each)
            if self._stop is not None and len(new) >= _PROBE_MIN:
                self._probe(by_id, new_names, new, path)
            seen: set[Any] = set()
            for i, (ident, item) in enumerate(zip(new_names, new, strict=True)):
                self.total += 1
                seen.add(ident)
                if ident not in by_id:
                    self._keep(self.added, _pointer(path, i), value=item)
                elif _same(by_id[ident][1], item):
                    self.unchanged += 1
                else:
                    self.compare(by_id[ident][1], item, _pointer(path, i))
            for ident, (i, gone) in by_id.items():
                if ident not in seen:
                    self._keep(self.removed, _pointer(path, i), **{key: gone[key]})
            return
        # items without a name: by a stable hash of each item (a multiset, so duplicates count)
        left = Counter(content_digest(item) for item in old)
        for i, item in enumerate(new):
            self.total += 1
            digest = content_digest(item)
            if left[digest] > 0:
                left[digest] -= 1
                self.unchanged += 1
            else:
                self._keep(self.added, _pointer(path, i), value=item)
        for i, item in enumerate(old):
            digest = content_digest(item)
            if left[digest] > 0:
                left[digest] -= 1
                self._keep(self.removed, _pointer(path, i))


def json_changes(old: Any, new: Any, limit: int | None = None) -> tuple[dict[str, Any], int, int]:
    """Added, removed and changed members from `old` to `new` (pointers into the new / old value): the
    non-empty lists, the members unchanged and compared. With ``limit``, ``_TooLong`` as soon as the
    changes surely write more than that."""
    changes = _Changes(limit)
    changes.compare(old, new, "")
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
    """The JSON container ``text`` holds, else None. Strict JSON through the engine's parser, which
    remembers it (the engine condenses the same text next, and the tool's next call compares with
    it); anything else as the stdlib reads it (NaN literals and all)."""
    value = parse_kept(text)
    if value is NOT_JSON:
        if text.lstrip()[:1] not in ("[", "{"):
            return None
        try:
            value = json.loads(text)
        except (ValueError, RecursionError):
            return None
    return value if type(value) is dict or type(value) is list else None


def overlap_delta(
    old: str, new: str, old_label: str, new_label: str, limit: int | None = None
) -> Delta | None:
    """What changed from `old` to `new`, or None when they are too different for a delta to help. JSON
    containers are compared as data, anything else as lines; ``limit`` (the most characters it would
    show) stops a comparison once its changes are surely longer."""
    if old == new or len(new) < MIN_CHARS or max(len(old), len(new)) > MAX_DIFF_CHARS:
        return None
    old_json, new_json = _as_json(old), _as_json(new)
    if old_json is not None and new_json is not None and type(old_json) is type(new_json):
        try:
            changes, unchanged, total = json_changes(old_json, new_json, limit)
        except _TooLong:
            return None
        if total == 0 or unchanged == 0:
            return None
        body = json.dumps({"compared_with": old_label, **changes}, ensure_ascii=False, indent=1)
        return Delta("json", body, unchanged, total)
    if limit is not None and abs(len(old) - len(new)) > limit:  # a diff lists every removed and added line
        return None
    if line_overlap(old, new) < 1 - MAX_RATIO:
        return None
    body, unchanged, total = text_diff(old, new, old_label, new_label)
    if not body or unchanged < (1 - MAX_RATIO) * total:  # (difflib's junk heuristic found too little)
        return None
    return Delta("text", body, unchanged, total)
