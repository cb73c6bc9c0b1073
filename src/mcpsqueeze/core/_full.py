"""`full`: the original of the same call, never a side effect repeated behind the agent's back. Pure.

Every door's `full` asks for the complete original of this same call (server, tool, canonical
arguments) as this conversation last got it. The rule, in order:

1. The conversation's last same call was changed (shrunk, deduplicated, projected, TOON, structured
   dropped): its original, from whichever store layer holds it. The tool does not run.
2. Otherwise (shown whole, never made here, or its original gone): a tool whose annotations say
   `readOnlyHint` or `idempotentHint` runs again, its result shown unshrunk.
3. Any other tool is presumed to have side effects and is not run: the answer is an error saying why;
   the plain call (without `full`) runs it, and `full` then answers from its kept original.

`Shown` records live in the conversation's pipeline: never across conversations or tenants. A
conversation with a name (a stateless caller's conversation, a session's id) behind a shared store
(Redis) also keeps them there, under its tenant and name, for every replica: a call served by one replica
and its `full` by another is rule 1 too. Of the pipeline's own record and the shared one, the later
(`latest`) is the last same call: a call one replica showed whole after another replica changed the same
call says "shown whole", never the older original.

To a client whose profile keeps less than the original (`first_page`), the answer is the original's first
page that fits, exact, after one line at its head that says which page of how many it is and the one call
that brings the rest (the recover tool's pages of it, from where this page ends)."""

from __future__ import annotations

import json
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from .._clients import ClientLimits, ClientProfile, arrange, model_view, page_chars
from .._jsonbytes import dumps, loads
from .._results import Result, duplicates_text, text_of, truncation_record
from .._voice import Voice

__all__ = [
    "FULL_META_KEY",
    "SHOWN_CALLS",
    "CallsShown",
    "Shown",
    "call_key",
    "first_page",
    "full_page_note",
    "latest",
    "listed_entry",
    "may_run_again",
    "not_run_again",
]

#: A plain tools/call's `_meta` key that asks for `full`.
FULL_META_KEY = "mcpsqueeze/full"
#: How many distinct calls (server, tool, arguments) a conversation remembers for `full`.
SHOWN_CALLS = 4096


@dataclass(frozen=True, slots=True)
class Shown:
    """What the conversation was shown for one call: its number, the id of the stored original when
    the result was changed (None: shown whole, nothing kept), and when (wall clock, so that records
    of one conversation made on several replicas compare)."""

    number: int
    response_id: str | None
    at: float = 0.0

    def record(self) -> bytes:
        """As a shared store keeps it."""
        return dumps({"number": self.number, "response_id": self.response_id, "at": self.at})

    @staticmethod
    def from_record(record: bytes) -> Shown | None:
        """A record `record()` made, or None for anything else (never an error: it is only a record)."""
        try:
            fields = loads(record)
            number, response_id, at = fields["number"], fields["response_id"], fields["at"]
        except (ValueError, TypeError, KeyError, RecursionError):
            return None
        if not isinstance(number, int) or not isinstance(at, int | float):
            return None
        if response_id is not None and not isinstance(response_id, str):
            return None
        return Shown(number, response_id, float(at))


def latest(own: Shown | None, shared: Shown | None) -> Shown | None:
    """The record of the last same call: of the pipeline's own and the shared store's, the later one."""
    if own is None or shared is None:
        return shared or own
    return shared if shared.at >= own.at else own


def call_key(server: str, tool: str, arguments: Mapping[str, Any]) -> str:
    """The same call, whatever the key order of its arguments. A library host's arguments need not be
    JSON (a set, NaN, an object): those are keyed by their `repr`, never refused."""
    try:
        return dumps([server, tool, arguments], sort_keys=True).decode()
    except (TypeError, ValueError):
        return json.dumps([server, tool, arguments], sort_keys=True, default=repr)


class CallsShown:
    """One conversation's last `Shown` per call, the least recently made forgotten past `limit`."""

    def __init__(self, limit: int = SHOWN_CALLS) -> None:
        self.limit = limit
        self._shown: OrderedDict[str, Shown] = OrderedDict()

    def note(self, key: str, shown: Shown) -> None:
        self._shown[key] = shown
        self._shown.move_to_end(key)
        while len(self._shown) > self.limit:
            self._shown.popitem(last=False)

    def last(self, key: str) -> Shown | None:
        return self._shown.get(key)


def may_run_again(tool: Mapping[str, Any] | None) -> bool:
    """Whether a tool (its tools/list entry) says running it again is harmless: `readOnlyHint` or
    `idempotentHint` true. A tool we know nothing about is presumed to have side effects."""
    annotations = tool.get("annotations") if tool is not None else None
    if not isinstance(annotations, Mapping):
        return False
    return annotations.get("readOnlyHint") is True or annotations.get("idempotentHint") is True


def listed_entry(
    tools: Iterable[Mapping[str, Any]], name: str
) -> Callable[[], Awaitable[Mapping[str, Any] | None]]:
    """`Pipeline.full`'s question "which tool is this?" answered from a listing a door already holds."""

    async def entry() -> Mapping[str, Any] | None:
        return next((t for t in tools if t.get("name") == name), None)

    return entry


def not_run_again(tool: str, shown: Shown | None, gone: str | None = None) -> dict[str, Any]:
    """The error `full` answers for a tool that may have side effects when no original of the call is
    held: why not (shown whole, never made here, or gone and why), and the explicit way to run it."""
    if shown is None:
        why = "this conversation holds no original of that call"
    elif shown.response_id is None:
        why = (
            f"call #{shown.number} was shown to you whole (nothing was cut), so no original was kept "
            "beyond what you saw"
        )
    else:
        why = f"the original of call #{shown.number} is no longer held ({(gone or 'gone').rstrip('.')})"
    text = (
        f"[mcpsqueeze] full asks for the original of this same call of {tool} (same arguments), and {why}. "
        f"{tool} was not run again: its annotations do not say it is read-only or idempotent, so running it "
        "would repeat the call and its side effects. To run it again anyway, call it without full; "
        "if its result is shrunk, full then returns that result's original."
    )
    return {"content": [{"type": "text", "text": text}], "isError": True}


def full_page_note(client: str, total: int, end: int, pages: int, rest_call: str | None) -> str:
    """The line a `full` answer that does not fit ``client`` opens with: which page of how many (the
    first ``end`` of ``total`` characters, exact after this line) and ``rest_call``, the call that
    brings the rest (None: the text is whole, only the structuredContent repeating it was left out)."""
    if rest_call is None:
        return (
            "[mcpsqueeze] full: the original of this call, exact after this line; its structuredContent "
            f"repeats the text and is left out, so that it fits what {client} keeps whole."
        )
    return (
        f"[mcpsqueeze] full: the original of this call is {total:,} characters, more than {client} keeps "
        f"whole, so this is page 1 of {pages}: characters 0-{end}, exact after this line. The rest: "
        f"{rest_call}" + ("; each page names the next." if pages > 2 else ".")
    )


def first_page(
    result: Result,
    response_id: str,
    file: str | None,
    client: ClientProfile,
    voice: Voice,
    page_size: int,
    rest_limits: ClientLimits,
) -> Result | None:
    """The `full` answer ``client`` keeps whole, when ``result`` (the original, stored as ``response_id``)
    is more than it keeps: one text block, the note first (``full_page_note``), then the first page of the
    original's text that fits its limits, exact; the rest is the recover tool's pages (each fitting
    ``rest_limits``, at most ``page_size`` characters) from where the page ends. None when the result
    fits as it is, or when its text alone would not carry what the client's model sees (no text, or a
    structuredContent that says more than the text and fits)."""
    limits = client.answer_limits()
    if limits.budget is None and limits.lines is None:
        return None
    if limits.fits(model_view(result, client)[0]):
        return None
    text = text_of(result)
    structured = result.get("structuredContent") is not None
    if not text or (structured and limits.fits(text) and not duplicates_text(result)):
        return None
    size = page_chars(text, limits, page_size)
    chunk = text[:size]
    rest = len(text) - len(chunk)
    pages, rest_call = 1, None
    if rest:
        pages += -(-rest // page_chars(text[size:], rest_limits, page_size))
        rest_call = voice.call(response_id, window=(size, rest))
    note = full_page_note(client.title, len(text), size, pages, rest_call)
    meta = dict(result.get("_meta") or {})
    total = len(text)
    report = {"pruned": bool(rest), "paged": True, "original_chars": total, "shown_chars": size}
    meta["truncation"] = truncation_record(note, response_id, file, report)
    meta["mcpsqueeze/page"] = {"page": 0, "pages": pages, "offset": 0, "length": size, "total_chars": total}
    if rest:
        meta["mcpsqueeze/next"] = {"response_id": response_id, "offset": size, "length": rest}
    return {"content": [{"type": "text", "text": arrange([chunk], note)}], "isError": False, "_meta": meta}
