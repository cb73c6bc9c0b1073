"""Recovery as every door offers it: the recover tool's definition, and its answer from a stored
original, never re-running a tool. Each door builds a `RecoverRequest` from its protocol, hands it to
`recover` and shows what it returns. Light to import: the shell shim renders files with `answer`."""

from __future__ import annotations

import itertools
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .._clients import ClientLimits, ClientProfile, model_view, page_chars, shown_part
from .._errors import RecoveryError, UsageError
from .._lines import line_span, line_starts
from .._results import duplicates_text, text_blocks, text_of
from .._unique import unique
from ..recovery import resolve_pointer
from ._request import RecoverRequest

if TYPE_CHECKING:
    from ..recovery import RecoveryStore

__all__ = [
    "DEFAULT_PAGE_SIZE",
    "LISTED_ARGUMENTS",
    "answer",
    "list_recover_tool",
    "parts_text",
    "recover",
    "recover_tool_definition",
]


#: The arguments the recover tool lists: what an agent composes itself. The others (query,
#: offset/length, page, ignore_case, context, skip) are taken all the same; the answers name them
#: where they apply (a page's or a search's next call, the JSON notice) and so do the errors.
LISTED_ARGUMENTS = ("response_id", "lines", "pointer", "grep")


def recover_tool_definition(name: str) -> dict[str, Any]:
    """The recover tool as every door lists it: ~100 o200k tokens on every turn, so it lists only what an
    agent composes itself (``LISTED_ARGUMENTS``, plain strings) and forbids nothing else; the notices spell
    out the exact calls, the answers name the next one, and a misused argument's error teaches it."""
    return {
        "name": name,
        "description": (
            'Exact original of a cut result, or lines "9-20,40-", JSON pointers, grep regex, search words.'
        ),
        "inputSchema": {
            "type": "object",
            "properties": {argument: {"type": "string"} for argument in LISTED_ARGUMENTS},
            "required": ["response_id"],
        },
        "annotations": {"readOnlyHint": True, "idempotentHint": True, "openWorldHint": False},
    }


def list_recover_tool(result: dict[str, Any], current: str | None) -> tuple[str | None, dict[str, Any]]:
    """A tools/list result with our recover tool appended under the first free name (squeeze_recover,
    squeeze_recover_2, ...), and that name; unchanged without a recover tool or on a page not the last."""
    tools = result.get("tools")
    if not current or not isinstance(tools, list) or result.get("nextCursor"):
        return current, result
    (name,) = unique(["squeeze_recover"], {str(t.get("name")) for t in tools if isinstance(t, dict)})
    return name, {**result, "tools": [*tools, recover_tool_definition(name)]}


#: Characters of one recover answer page on the MCP doors (`--page-size`): under Claude Code's 50,000-
#: character spill to a file and, at ~4 characters a token, its 25,000-token MAX_MCP_OUTPUT_TOKENS.
DEFAULT_PAGE_SIZE = 40_000
#: Characters a several-part answer of `recover` may hold unpaged (50 parts of a big original could be
#: hundreds of MB): past it, the request is refused and names `page`, with which a page costs one page.
#: (`mcpsq recover`, which prints to stdout and has no pages, answers from files itself: `answer`.)
MAX_JOINED = 64 << 20


def recover(
    store: RecoveryStore | None,
    request: RecoverRequest,
    page_size: int | None = None,
    fit: ClientLimits | None = None,
    client: ClientProfile | None = None,
) -> dict[str, Any]:
    """The recover tool's answer to ``request``, for every door, from the stored originals. With
    ``page_size`` (the MCP doors) a longer answer is one page of it (``_page``; a request naming a page
    is paged on any door), else the answer itself; with ``fit`` (a client's limits) every answer and page
    fits them; ``client``: the profile of whoever reads it (a whole original, its lines, grep and search
    read what its model saw: ``_seen``).
    RecoveryError when an original is not held, UsageError when a part asked for does not exist."""
    if store is None:
        raise RecoveryError("this proxy keeps no originals (--no-shrink and --no-dedup)")
    originals = []
    for response_id in request.response_ids:
        try:
            originals.append(_parsed(store.get(response_id)))
        except (ValueError, RecursionError) as exc:
            raise RecoveryError(
                f"the stored original {response_id} is not valid JSON ({exc}); it may have been altered"
            ) from exc
    paged = request.page is not None or page_size is not None or fit is not None
    size = page_size or DEFAULT_PAGE_SIZE
    if request.grep is not None or request.search is not None:  # one original (checked by the request)
        original = originals.pop()
        part = _part(original, client)
        result = _found(original, _text_taken(original, client, part), part, request)
    elif request.selects or len(originals) > 1:
        # One page costs about one page: the parts are cut out only where the page lies.
        pieces = _pieces(originals, request, client)
        total = sum(p.size for p in pieces)
        if paged and (request.page is not None or total > size or fit is not None):
            return _page(pieces, request, size, fit)
        if len(pieces) > 1 and total > MAX_JOINED:
            raise UsageError(
                f"those {len(pieces)} parts add up to {total:,} characters, over the {MAX_JOINED:,} one "
                'answer holds; ask for fewer or smaller parts, or for them a page at a time ("page": 0)'
            )
        return _assembled(pieces)
    else:
        result = answer(originals, request, client)
    if not paged:
        return result
    text = parts_text(result)  # a whole original, or a search's answer: paged from its text
    if request.page is None and len(text) <= size and (fit is None or fit.fits(text_of(result))):
        return result
    return _page([_Piece(text, 0, len(text), {})], request, size, fit)


def _parsed(data: bytes) -> dict[str, Any]:
    """A stored original, parsed while holding no more than its text and what the text parses to (the
    bytes are let go first): a recovery's memory stays within a few times the original's size."""
    from .._jsonbytes import loads_text  # not on the shell shim's path, which reads files itself

    if not data:
        return {}
    text = data.decode("utf-8")
    del data
    parsed: dict[str, Any] = loads_text(text)
    return parsed


def _page(
    pieces: Sequence[_Piece], request: RecoverRequest, page_size: int, fit: ClientLimits | None = None
) -> dict[str, Any]:
    """Page ``request.page`` of the pieces' text joined, cut from the pieces it overlaps: one exact text
    block and a note naming the next call, within ``fit``. ``_meta["mcpsqueeze/page"]`` says where the page
    lies (and each part's place, for several), ``_meta["mcpsqueeze/next"]`` is the next page's arguments;
    pages join back byte for byte. A page of many parts of a big original holds one page, not all the
    parts joined (within a client's byte or line limits, finding the page size reads every page once)."""
    total = sum(p.size for p in pieces)
    if fit is not None:
        page_size = page_chars(
            lambda size: ("".join(_overlap(pieces, at, at + size)) for at in range(0, total, size)),
            fit,
            page_size,
        )
    page = request.page or 0
    pages = max(1, -(-total // page_size))
    if page >= pages:
        raise UsageError(
            f"page {page} is past the last page: this answer has {pages} page(s), 0 to {pages - 1}"
        )
    start = page * page_size
    chunk = "".join(_overlap(pieces, start, start + page_size))
    place: dict[str, Any] = {
        "page": page, "pages": pages, "offset": start, "length": len(chunk), "total_chars": total,
    }  # fmt: skip
    if len(pieces) > 1:
        ends = itertools.accumulate(p.size for p in pieces)
        place["parts"] = [
            {**p.meta, "start": end - p.size, "end": end} for p, end in zip(pieces, ends, strict=True)
        ]
    out_meta: dict[str, Any] = {"mcpsqueeze/page": place}
    note = f"mcpsqueeze: page {page + 1} of {pages}, characters {start}-{start + len(chunk)} of {total}"
    if page + 1 < pages:
        following = {**request.arguments(), "page": page + 1}
        out_meta["mcpsqueeze/next"] = following
        note += f"; next page: call this tool with {json.dumps(following, separators=(',', ':'))}"
    else:
        note += "; the last page"
    if not chunk.endswith("\n"):  # a client that joins blocks must not run the note into the text
        note = "\n" + note
    return {"content": [_block(chunk), _block(note)], "isError": False, "_meta": out_meta}


def _overlap(pieces: Sequence[_Piece], start: int, end: int) -> list[str]:
    """The text of the pieces joined, from ``start`` to ``end``: only what lies there is cut out."""
    out, at = [], 0
    for piece in pieces:
        if at >= end:
            break
        if at + piece.size > start:
            out.append(
                piece.source[piece.start + max(0, start - at) : piece.start + min(piece.size, end - at)]
            )
        at += piece.size
    return out


def answer(
    originals: Sequence[dict[str, Any]], request: RecoverRequest, client: ClientProfile | None = None
) -> dict[str, Any]:
    """The CallToolResult for ``request`` from its ``originals`` (one per response id). Pure. One part per
    (id, pointer, line range): the original, a JSON node, a JMESPath projection, a window or a line range
    (the original, its lines, grep and search read what ``client``'s model saw of it, ``_seen``; a window
    reads its text). One part is one exact text block, its place in ``_meta``; several are a label block
    and each part's exact text in its own block, their places in ``_meta["mcpsqueeze/parts"]``."""
    if not request.selects and len(originals) == 1:
        part = _part(originals[0], client)
        if part == "text":
            return {"content": list(originals[0].get("content", [])), "isError": False}
        # Our answer carries no structuredContent, so its text is what the model reads.
        return {"content": [_block(_seen(originals[0], client, part))], "isError": False}
    if request.grep is not None or request.search is not None:  # one original (checked by the request)
        part = _part(originals[0], client)
        return _found(originals[0], _seen(originals[0], client, part), part, request)
    return _assembled(_pieces(originals, request, client))


def _part(original: dict[str, Any], client: ClientProfile | None) -> str:
    """Which part of ``original`` ``client``'s model read (``shown_part``), "text" also when its
    structuredContent merely repeats the text (the text is then what recovery reads: it has the lines)."""
    part = shown_part(original, client)
    return "text" if part != "text" and duplicates_text(original) else part


def _seen(original: dict[str, Any], client: ClientProfile | None, part: str) -> str:
    """The text ``client``'s model read of ``original``, ``part`` of it (``_part``): its text, or its
    structuredContent's compact JSON (after the text, for a client that shows both) when that says more
    than the text (a one-line summary beside the rows). The whole original, its lines, grep and search
    read this, so the agent recovers and searches what its model was shown a preview of; a window
    (offset/length) reads the text, as the `full` answer's first page names its rest."""
    return text_of(original) if part == "text" else model_view(original, client)[0]


def _assembled(pieces: Sequence[_Piece]) -> dict[str, Any]:
    """The answer of these parts: one part is its exact text, its place in ``_meta``; several are a
    label block, then each part's exact text in its own block (see ``answer``)."""
    if len(pieces) == 1:
        place = {k: v for k, v in pieces[0].meta.items() if k in ("mcpsqueeze/lines", "mcpsqueeze/window")}
        return {"content": [_block(pieces[0].text())], "isError": False, "_meta": place}
    ids = {p.meta["response_id"] for p in pieces}
    one = len(ids) == 1  # the id is named once, not in every part's label (20 tokens each)
    labels = "; ".join(f"{i}) {_label(p.meta, with_id=not one)}" for i, p in enumerate(pieces, 1))
    whose = f" of {next(iter(ids))}" if one else ""
    # The label ends its own line: a client that joins text blocks (some do, without a separator) must
    # not run it into the first part's first line.
    label = f"mcpsqueeze: {len(pieces)} parts{whose} follow, one block each, exact and in order: {labels}\n"
    return {
        "content": [_block(label), *(_block(p.text()) for p in pieces)],
        "isError": False,
        "_meta": {"mcpsqueeze/parts": [{"block": i, **p.meta} for i, p in enumerate(pieces, 1)]},
    }


def parts_text(result: dict[str, Any]) -> str:
    """The text an answer recovers: its parts joined exactly (without the label of a several-part
    answer); the text blocks joined, as an agent reads them, for any other result."""
    content, indexes = text_blocks(result)
    meta = result.get("_meta")
    if isinstance(meta, dict) and isinstance(meta.get("mcpsqueeze/page"), dict):
        return str(content[0]["text"])  # one page: its first block (the second is the note)
    if isinstance(meta, dict) and isinstance(meta.get("mcpsqueeze/parts"), list):
        return "".join(content[part["block"]]["text"] for part in meta["mcpsqueeze/parts"])
    return "\n".join(content[i]["text"] for i in indexes)


def _block(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


@dataclass(frozen=True, slots=True)
class _Piece:
    """One part of an answer, not cut out yet: ``source[start:end]``, and where it comes from (its
    id, pointer, lines or window: the part's ``_meta``)."""

    source: str
    start: int
    end: int
    meta: dict[str, Any]

    @property
    def size(self) -> int:
        return self.end - self.start

    def text(self) -> str:
        return self.source[self.start : self.end]


def _pieces(
    originals: Sequence[dict[str, Any]], request: RecoverRequest, client: ClientProfile | None = None
) -> list[_Piece]:
    """One piece per (id, pointer, line range), in order: line ranges of what ``client``'s model saw
    (``_seen``), windows of the text, pointers and queries in the JSON its model saw. Each original's
    text, each (id, pointer)'s selection and each selection's line places are worked out once, however
    many parts share them."""
    pieces = []
    for response_id, original in zip(request.response_ids, originals, strict=True):
        text = text_of(original)
        part = _part(original, client)
        document: Any = _UNPARSED
        for pointer in request.pointers or (None,):
            meta: dict[str, Any] = {"response_id": response_id}
            selected = text
            if pointer is not None or request.query is not None:
                if document is _UNPARSED:
                    what = "pointer" if pointer is not None else "query"
                    document = _document(original, text, what, part)
                selected = _selected(document, pointer, request.query, len(text))
                if pointer is not None:
                    meta["pointer"] = pointer
            elif request.lines and part != "text":
                selected = _seen(original, client, part)
            starts = line_starts(selected) if request.lines else None
            for lines in request.lines:
                begin, end, first, last, total_lines = line_span(selected, str(lines), starts)
                place = {"first": first, "last": last, "total_lines": total_lines}
                pieces.append(_Piece(selected, begin, end, {**meta, "mcpsqueeze/lines": place}))
            if not request.lines:
                offset, total = request.offset or 0, len(selected)
                if offset > total:
                    raise UsageError(
                        f"offset {offset} is past the end of the text ({total} characters); use an offset "
                        f"below {total}."
                    )
                end = total if request.length is None else min(total, offset + request.length)
                # The window is the exact text (so windows concatenate back to the original); its place
                # is in _meta.
                place = {"offset": offset, "length": end - offset, "total_chars": total}
                pieces.append(_Piece(selected, offset, end, {**meta, "mcpsqueeze/window": place}))
    return pieces


_UNPARSED = object()


def _label(meta: dict[str, Any], with_id: bool = True) -> str:
    words = [meta["response_id"]] if with_id else []
    if "pointer" in meta:
        words.append(meta["pointer"])
    if "mcpsqueeze/lines" in meta:
        place = meta["mcpsqueeze/lines"]
        words.append(f"lines {place['first']}-{place['last']} of {place['total_lines']}")
    else:
        place = meta["mcpsqueeze/window"]
        words.append(f"chars {place['offset']}-{place['offset'] + place['length']} of {place['total_chars']}")
    return " ".join(words)


def _text_taken(original: dict[str, Any], client: ClientProfile | None, part: str) -> str:
    """What ``client``'s model read of the original (``_seen``), its text blocks then taken out of it: a
    search holds that text or what it parses to, not both (the caller keeps no reference to it either;
    a recovery's own parse of the original, which nothing else sees)."""
    seen = _seen(original, client, part)
    content = original.get("content")
    if isinstance(content, list):
        original["content"] = [b for b in content if not (isinstance(b, dict) and b.get("type") == "text")]
    return seen


def _found(original: dict[str, Any], text: str, part: str, request: RecoverRequest) -> dict[str, Any]:
    """One page of what ``grep`` or ``search`` finds in ``text``, what the model saw of the original
    (``part`` of it, see ``_seen``): its lines, its JSON (values with pointers; the structuredContent
    itself when that is what the model saw), or the part ``pointer`` names; the next page's call in
    ``_meta["mcpsqueeze/next"]``."""
    from ._search import DEFAULT_CONTEXT, grep, search  # RE2 and the BM25 ranking: only for a search

    node: str | dict[str, Any] | list[Any] = text
    base = ""
    if request.pointers:
        base = request.pointers[0]
        named = resolve_pointer(_document(original, text, "pointer", part), base)
        node = named if isinstance(named, str | dict | list) else json.dumps(named)
    else:
        if part == "structuredContent":
            document = original["structuredContent"]
        else:
            try:
                document = json.loads(text)
            except (ValueError, RecursionError):  # text: searched by its lines, unless there is none
                document = None if text.strip() else original.get("structuredContent")
        if isinstance(document, dict | list):
            node = document
    del text, original
    context = DEFAULT_CONTEXT if request.context is None else request.context
    skip = request.skip or 0
    if request.grep is not None:
        case = bool(request.ignore_case)
        found = grep(node, request.grep, ignore_case=case, context=context, skip=skip, base=base)
    else:
        assert request.search is not None
        found = search(node, request.search, context=context, skip=skip, base=base)
    meta: dict[str, Any] = {"mcpsqueeze/search": found.meta()}
    if found.next_skip is not None:
        meta["mcpsqueeze/next"] = {**request.arguments(), "skip": found.next_skip}
    return {"content": [{"type": "text", "text": found.text}], "isError": False, "_meta": meta}


def _document(original: dict[str, Any], text: str, what: str, part: str = "text") -> Any:
    """The original's JSON: its structuredContent when that alone is what the model saw (``part``), else
    its text parsed, else its structuredContent; RecoveryError when neither."""
    if part == "structuredContent":
        return original["structuredContent"]
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        if "structuredContent" not in original:
            raise RecoveryError(
                f"the original is not JSON, so a {what} cannot select a part of it; use offset/length "
                "or lines to read its text instead"
            ) from None
        return original["structuredContent"]


def _selected(document: Any, pointer: str | None, query: str | None, size: int) -> str:
    """The text of the node ``pointer`` names and ``query`` projects in ``document`` (the original's
    JSON, ``size`` characters of it): a string as is, else compact JSON (as previews show JSON: the
    same values for about half the tokens of indented JSON)."""
    node = resolve_pointer(document, pointer) if pointer is not None else document
    if query is not None:
        from .._projection import project  # jmespath: loaded only for a query

        node = project(node, query, size=size)
    if isinstance(node, str):
        return node
    try:
        return json.dumps(node, ensure_ascii=False, separators=(",", ":"))
    except RecursionError:
        raise RecoveryError(
            "the selected part nests too deeply to show as JSON; select a deeper part with pointer, "
            "or read the text with offset/length"
        ) from None
