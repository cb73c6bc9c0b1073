"""The agent-cost model: what an agent pays to see what it needs (pure: no I/O).

Preview tokens alone reward hiding; an agent pays the preview plus the recoveries it must make to see
what it needs, and every recovery is one more model turn.

- **Needs.** For every result of the session, ``needs_of`` draws ``max(KS)`` things uniformly at
  random (``random.Random(f"{SEED}:{index}")``, without replacement) from the DIRECT result, never
  from a preview: a JSON object or array gives its scalar leaf values (with their JSON pointers), any
  other text its lines that hold a letter or a digit. K=1 takes the first of them, K=3 the first three,
  so every route is asked the same things. Only the results a route changed count.
- **Visible.** A need is free when it is already in the agent's context: this result's preview or
  anything the same route showed earlier (earlier previews and recovery answers; a dedup pointer leaves
  the earlier result in context). A line is visible when it is a whole line, verbatim, of the context
  (lines inside JSON strings count). A leaf is visible when a JSON value of the context, walked along
  the leaf's pointer, reaches the same value (arrays matched item by item by their short scalar
  members, ``align``, so an array with items left out still lines up), or a recovery returned a node
  that holds it.
- **Price.** Each need not visible costs the cheapest exact recovery the route offers, made against
  the running proxy and counted (``peers.py``): for mcpsqueeze the fold that covers the line (``lines``
  = the range its ``[lines A-B folded]`` marker names) or the node where the preview stops holding the
  leaf (``pointer``), several in one call, else the whole original, whichever costs the agent less; for
  mcp-compressor ``full=true``; tooltrim offers none (the need is unreachable). A call costs its
  answer's tokens plus ``OVERHEAD``, and one round trip.
- **Cost** = tokens to see (the session's previews + the recoveries' answers) + ``TURN`` x round trips.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

SEED = 21  # fixed: the needs are the same in every run and every configuration
KS = (1, 3)
OVERHEAD = 60  # tokens a recovery call costs beyond its answer (the generated call, the wrapper)
TURN = 1000  # tokens one more model turn is priced at

_WORD = re.compile(r"[A-Za-z0-9]")
_FOLD = re.compile(r"\[lines? ([0-9]+)(?:-([0-9]+))? folded[]:]")
_SHORT = 200  # a string member this long or longer says little about which item it is

Path = tuple[str | int, ...]


def text_lines(text: str) -> list[str]:
    return [line.rstrip("\r") for line in text.split("\n")]


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def json_values(text: str) -> list[Any]:
    """The JSON values ``text`` starts with, one after another (a preview may append a notice or a
    ``{"truncation": ...}`` object after the value, or open with a one-line ``[mcpsqueeze]`` notice,
    which a model reads past), stopping at the first thing that is not JSON."""
    out: list[Any] = []
    decoder = json.JSONDecoder()
    at = text.index("\n") + 1 if text.startswith("[mcpsqueeze]") and "\n" in text else 0
    while at < len(text) and text[at] in '[{"':
        try:
            value, at = decoder.raw_decode(text, at)
        except ValueError:
            break
        out.append(value)
    return out


def shown_lines(text: str) -> set[str]:
    """The whole lines a model reads in ``text``: its own lines, and the lines of every string of
    the JSON values it is made of (mcp-compressor shows a text result as one JSON string)."""
    shown = set(text_lines(text))
    for value in json_values(text):
        for string in _strings(value):
            shown.update(text_lines(string))
    return shown


def json_document(text: str) -> Any:
    """The JSON object or array ``text`` is, or None."""
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return value if isinstance(value, (dict, list)) else None


def leaves(value: Any, path: Path = ()) -> Iterator[tuple[Path, Any]]:
    """Every scalar of a JSON value with its path (keys and indexes)."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield from leaves(item, (*path, key))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from leaves(item, (*path, i))
    else:
        yield path, value


def pointer_of(path: Path) -> str:
    """RFC 6901."""
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in path)


@dataclass(frozen=True)
class Need:
    index: int  # the call in the session
    line: int = 0  # 1-based line of the original (a line need)
    text: str = ""  # that line
    path: Path | None = None  # the leaf's path (a leaf need)
    value: Any = None

    @property
    def is_leaf(self) -> bool:
        return self.path is not None


def needs_of(index: int, original: str, count: int = max(KS), seed: int = SEED) -> list[Need]:
    """``count`` needs drawn uniformly at random from the direct result of call ``index``."""
    rng = random.Random(f"{seed}:{index}")
    document = json_document(original)
    if document is not None:
        found = list(leaves(document))
        return [Need(index, path=p, value=v) for p, v in rng.sample(found, min(count, len(found)))]
    numbered = [(n, line) for n, line in enumerate(original.split("\n"), 1) if _WORD.search(line)]
    picked = rng.sample(numbered, min(count, len(numbered)))
    return [Need(index, line=n, text=line.rstrip("\r")) for n, line in picked]


def _same(a: Any, b: Any) -> bool:
    return type(a) is type(b) and a == b


def _scalar(value: Any) -> bool:
    return not isinstance(value, (dict, list))


def _compatible(original: Any, shown: Any) -> bool:
    """Whether ``shown`` (an item of a context array) is the original's item ``original``."""
    if _scalar(original) or _scalar(shown):
        return _same(original, shown)
    if isinstance(original, dict) and isinstance(shown, dict):
        common = [
            k
            for k, v in original.items()
            if k in shown and _scalar(v) and not (isinstance(v, str) and len(v) >= _SHORT)
        ]
        if common:
            return all(_same(original[k], shown[k]) for k in common)
        return bool(set(original) & set(shown)) or (not original and not shown)
    if isinstance(original, list) and isinstance(shown, list):
        return not shown or (bool(original) and _compatible(original[0], shown[0]))
    return False


def align(original: list[Any], shown: list[Any]) -> dict[int, int]:
    """Original index -> index in ``shown``: in order, each shown item matched to the first original
    item at or after the last match that it is compatible with (markers and cut items match nothing)."""
    out: dict[int, int] = {}
    at = 0
    for j, item in enumerate(shown):
        for i in range(at, len(original)):
            if _compatible(original[i], item):
                out[i] = j
                at = i + 1
                break
    return out


def locate(original: Any, shown: Any, path: Path) -> Path | None:
    """None when ``shown`` holds the original's leaf at ``path``; else the path of the node where it
    stops holding it: the array item left out, the object member missing, the string cut."""
    for depth, step in enumerate(path):
        if isinstance(original, dict):
            if not isinstance(shown, dict) or step not in shown:
                return path[: depth + 1] if isinstance(shown, dict) else path[:depth]
            original, shown = original[step], shown[step]
        else:
            assert isinstance(original, list) and isinstance(step, int)
            if not isinstance(shown, list):
                return path[:depth]
            matched = align(original, shown).get(step)
            if matched is None:
                return path[: depth + 1]
            original, shown = original[step], shown[matched]
    return None if _same(original, shown) else path


def fold_of(preview: str, line: int) -> tuple[int, int] | None:
    """The smallest ``[lines A-B folded]`` (or ``[line A folded]``) range of ``preview`` holding ``line``."""
    best: tuple[int, int] | None = None
    for match in _FOLD.finditer(preview):
        first = int(match.group(1))
        last = int(match.group(2) or first)
        if first <= line <= last and (best is None or last - first < best[1] - best[0]):
            best = (first, last)
    return best


def parts_for(unseen: list[Need], shown: str, document: Any) -> tuple[set[tuple[int, int]], set[Path], bool]:
    """What recovering ``unseen`` asks for, given the preview ``shown`` of ``document``: the folds that
    cover the lines, the JSON nodes where the preview stops holding the leaves, and whether some need
    has neither (then only the whole original will do)."""
    values = [v for v in json_values(shown) if isinstance(v, (dict, list))]
    folds: set[tuple[int, int]] = set()
    nodes: set[Path] = set()
    whole = False
    for need in unseen:
        if need.path is not None:
            where = locate(document, values[0], need.path) if values else None
            if where:
                nodes.add(where)
            else:  # not found, or the root: the whole original
                whole = True
        else:
            fold = fold_of(shown, need.line)
            if fold is None:
                whole = True
            else:
                folds.add(fold)
    return folds, nodes, whole


def outermost(nodes: set[Path]) -> list[Path]:
    """``nodes`` without those inside another one (it comes with the one that holds it), shortest first."""
    kept: list[Path] = []
    for path in sorted(nodes, key=len):
        if not any(path[: len(q)] == q for q in kept):
            kept.append(path)
    return kept


@dataclass
class Context:
    """What one configuration has shown the agent so far in the session."""

    lines: set[str] = field(default_factory=set)
    values: list[Any] = field(default_factory=list)  # the JSON values the context starts its texts with
    recovered: set[tuple[int, Path]] = field(default_factory=set)  # (call, path): a node of its original

    def add(self, text: str) -> None:
        self.lines |= shown_lines(text)
        for value in json_values(text):
            if isinstance(value, str):  # a text shown as a JSON string, which may itself be JSON
                inner = json_document(value)
                if inner is not None:
                    self.values.append(inner)
            else:
                self.values.append(value)

    def add_node(self, index: int, path: Path) -> None:
        """A recovery returned the node at ``path`` of call ``index``'s original, exactly."""
        self.recovered.add((index, path))

    def sees(self, need: Need, document: Any, same: tuple[int, ...] = ()) -> bool:
        """Whether ``need`` is visible; ``document`` is its original's JSON, ``same`` the calls whose
        original is the same as this one's (a node recovered from one of them holds it too)."""
        if not need.is_leaf:
            return need.text in self.lines
        assert need.path is not None
        for index in (need.index, *same):
            if any((index, need.path[:depth]) in self.recovered for depth in range(len(need.path) + 1)):
                return True
        return any(locate(document, value, need.path) is None for value in self.values)
