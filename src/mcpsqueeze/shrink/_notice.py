"""The agent-facing words of the engine: the recovery hint, the report, and their one renderer.

Every text a model reads about a shrunk result (the truncation message, the in-text marker and the
trailing notice) is produced here, so the golden files in ``tests/shrink/golden/`` pin all of it.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field

from .._voice import McpVoice, Voice

__all__ = [
    "COMPACT_BELOW",
    "RecoveryHint",
    "Report",
    "example_pointer",
    "render_call",
    "render_message",
    "render_notice",
    "render_text_marker",
    "truncation_record",
]

#: How many dropped field names a report may list, and how long each may be, so that the report can
#: never blow the budget it reports on.
MAX_DROPPED_FIELDS = 20
MAX_FIELD_NAME_CHARS = 40


#: The engine's default voice: the MCP recover tool (pure API callers rarely need another).
_MCP: Voice = McpVoice()


@dataclass(frozen=True)
class RecoveryHint:
    """Where the original of a shrunk result can be fetched from, and the voice of the door that
    words it (the engine never asks which door it is)."""

    response_id: str
    file: str | None
    voice: Voice = _MCP
    #: A JSON pointer that exists in this original, offered as the example of reading one part
    #: (None: the original is not one JSON document, so only a text window is offered).
    pointer: str | None = None


_SAFE_KEY = re.compile(r"[A-Za-z0-9_.-]{1,40}\Z")


def example_pointer(value: object) -> str | None:
    """A pointer into ``value`` that resolves: the first item of arrays, a container-valued key of
    objects, at most three segments; None for a scalar. Only keys that need no escaping in JSON,
    a shell or RFC 6901 are used, so the hint can be copied as it is."""
    parts: list[str] = []
    node = value
    for _ in range(3):
        if isinstance(node, list) and node:
            parts.append("0")
            node = node[0]
        elif isinstance(node, dict):
            keys = [k for k in node if isinstance(k, str) and _SAFE_KEY.match(k)]
            if not keys:
                break
            key = next((k for k in keys if isinstance(node[k], (list, dict)) and node[k]), keys[0])
            parts.append(key)
            node = node[key]
        else:
            break
    return "/" + "/".join(parts) if parts else None


@dataclass(frozen=True)
class Report:
    """The engine's real counters for one shrunk result (never estimates)."""

    pruned: bool
    fits: bool
    original_chars: int
    shown_chars: int
    items_omitted: int
    keys_omitted: int
    strings_truncated: int
    dropped_fields: tuple[str, ...] = field(default=())
    strategy: str = ""

    def as_dict(self, *, compact: bool = False) -> dict[str, object]:
        """Every counter in order; ``compact`` (small budgets) leaves out the diagnostic strategy."""
        report = asdict(self)
        report["dropped_fields"] = list(self.dropped_fields)
        if compact:
            del report["strategy"]
        return report


def _what_was_cut(report: Report, kind: str) -> str:
    parts: list[str] = []
    for n, what, done in (
        (report.items_omitted, "array item", "omitted"),
        (report.keys_omitted, "object key", "omitted"),
        (report.strings_truncated, "long string", "cut short"),
    ):
        if n:
            parts.append(f"{n} {what}{'' if n == 1 else 's'} {done}")
    if kind in ("text", "mixed"):
        if "text:outline" in report.strategy:  # outlines fold lines; their markers name the ranges
            parts.append("lines folded")
        if "text:passages" in report.strategy:  # passages fold characters, named the same way
            parts.append("characters folded")
        if "text:head-tail" in report.strategy or not re.search(
            r"text:(?:outline|passages)", report.strategy
        ):
            parts.append("the middle of long text cut out")
    if not parts:
        return "only whitespace removed"
    if len(parts) > 1:
        return ", ".join(parts[:-1]) + " and " + parts[-1]
    return parts[0]


#: Budgets under this get the compact message: one sentence and the exact recover call.
COMPACT_BELOW = 4000


def render_call(hint: RecoveryHint) -> str:
    """The exact call (in the door's voice) that returns the whole original."""
    return hint.voice.call(hint.response_id)


def _one_line(report: Report, hint: RecoveryHint) -> str:
    """The shortest complete hint: the original size and the exact recover call (the recover tool's
    own description says how to fetch a part)."""
    head = f"shrunk from {report.original_chars} chars; full original: {render_call(hint)}"
    return head + hint.voice.file_recipe(hint.file)


def render_message(report: Report, hint: RecoveryHint, kind: str, *, compact: bool = False) -> str:
    """The one paragraph a model reads about a shrunk result: what was cut and how to get it back.

    ``kind`` is what was shrunk: ``"json"``, ``"text"`` or ``"mixed"``. ``compact`` (for budgets under
    ``COMPACT_BELOW``) is the one-line form of the notice: the sizes and the exact recover call (the
    record around it names the counts and the file).
    """
    if compact:
        line = _one_line(report, hint)
        return line[0].upper() + line[1:] + "."
    head = f"Shrunk from {report.original_chars} to {report.shown_chars} chars"
    what = _what_was_cut(report, kind)
    how = hint.voice.how_to_recover(hint.response_id, hint.file, hint.pointer)
    return f"{head} ({what}; markers show where). {how}"


def render_notice(report: Report, hint: RecoveryHint) -> str:
    """The trailing text block after an array or scalar whose record lives in ``_meta.truncation``:
    one line, for clients that do not show ``_meta``, telling how to get the original back, and
    (for a JSON original) one part of it: the recover tool's listing is short, so the notice shows
    the call."""
    part = "" if hint.pointer is None else hint.voice.one_part(hint.pointer)
    return f"[mcpsqueeze] {_one_line(report, hint)}{part}"


def render_text_marker(omitted_chars: int, hint: RecoveryHint) -> str:
    """The marker put where the middle of a text block was cut out; ``omitted_chars`` is exact."""
    return f"[...truncated {omitted_chars} characters; recover with {render_call(hint)}]"


def truncation_record(
    report: Report, hint: RecoveryHint, kind: str, *, compact: bool = False
) -> dict[str, object]:
    """The record for ``result._meta.truncation`` and the sibling ``truncation`` key of an object.

    ``compact`` uses the compact message and the compact report."""
    record: dict[str, object] = {
        "message": render_message(report, hint, kind, compact=compact),
        "response_id": hint.response_id,
    }
    if hint.file is not None:
        record["original_response_file"] = hint.file
    record["report"] = report.as_dict(compact=compact)
    return record


def render_outline_header(label: str, first: int, last: int, example: str, hint: RecoveryHint) -> str:
    """The first line of an outline preview: what the text is, that folded lines are marked with
    their exact line range, and the exact call that reads one range back (``example``)."""
    span = f"{last - first + 1} lines" if first == 1 else f"lines {first}-{last}"
    return (
        f"[mcpsqueeze] Outline of {span} ({label}); each [lines A-B folded] marker stands for exactly those "
        f"lines. Read them: {hint.voice.call(hint.response_id, lines=example)}"
    )


def render_passages_header(
    label: str, start: int, end: int, example: tuple[int, int], hint: RecoveryHint, how: str = ""
) -> str:
    """The first line of a preview by characters (a page's text, prose without short lines): what the
    text is, that folded characters are marked with their exact range, and the exact call that reads
    one range back (``example``: offset and length). ``how`` says how the shown text relates to the
    characters it stands for ("shown as its text (tags left out)")."""
    span = f"{end - start} characters" if start == 0 else f"characters {start}-{end}"
    return (
        f"[mcpsqueeze] {label} of {span}{', ' + how if how else ''}; each [chars A-B folded] marker stands "
        f"for exactly the characters from offset A to B. Read them: "
        f"{hint.voice.call(hint.response_id, window=example)}"
    )


def render_chars_marker(start: int, end: int, detail: str = "") -> str:
    """The marker for the original's characters ``start``..``end`` (offsets, end excluded) left out."""
    return f"[chars {start}-{end} folded: {detail}]" if detail else f"[chars {start}-{end} folded]"


def render_fold_marker(first: int, last: int, detail: str = "") -> str:
    """The marker for the original's lines ``first``..``last`` (1-based, inclusive) left out."""
    span = f"line {first}" if first == last else f"lines {first}-{last}"
    return f"[{span} folded: {detail}]" if detail else f"[{span} folded]"
