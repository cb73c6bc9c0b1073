"""``shrink_texts``: several text blocks, one budget, one truncation record."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from mcpsqueeze._errors import ShrinkError
from mcpsqueeze._jsonbytes import NOT_JSON, dumps_text, parse_kept
from mcpsqueeze.shrink._copy import Condensed, Plans
from mcpsqueeze.shrink._limits import limit_search
from mcpsqueeze.shrink._notice import (
    COMPACT_BELOW,
    MAX_DROPPED_FIELDS,
    MAX_FIELD_NAME_CHARS,
    RecoveryHint,
    Report,
    example_pointer,
    render_notice,
    render_text_marker,
    truncation_record,
)
from mcpsqueeze.shrink._outline import SOFT_CHARS, Outliner
from mcpsqueeze.shrink._priced import priced
from mcpsqueeze.shrink._text import head_tail
from mcpsqueeze.shrink._unusual import pinned_chars, pins
from mcpsqueeze.shrink._value import JSON_CHARS, MIN_SAVING, MIN_SAVING_CHARS, text_goal

__all__ = ["Shrunk", "shrink_texts"]

_MIN_PREVIEW = 64  # fewer characters than this of a block's own content is no useful preview
_ATTEMPTS = 6
_REFILL = 8  # a preview this far under budget is redone with the unused room ...
_REFILLS = 2  # ... at most this many times


@dataclass(frozen=True)
class Shrunk:
    """The presented text blocks, an optional trailing notice block, and the truncation record."""

    texts: list[str]
    notice: str | None
    truncation: dict[str, object]
    report: Report


@dataclass(slots=True)
class _Block:
    text: str
    value: object  # parsed JSON, or NOT_JSON for text
    sibling: bool  # a JSON object free to take the "truncation" key
    needs_notice: bool  # JSON whose type cannot carry the record
    first_line: int = 1  # the number of its first line in the original's joined text
    first_char: int = 0  # ... and the offset of its first character there
    pins: dict[int, list[int]] | None = None  # JSON: its arrays' pinned items (``_unusual.pins``)
    outliner: Outliner | None = None  # its format and plan, worked out on the first attempt


def _classify(text: str) -> _Block:
    value = parse_kept(text)  # (the overlap stage has often just parsed the same text)
    # An npm lock file as npm writes it (pretty JSON) is outlined as text, a marker per package
    # (``_locks``), instead of condensed as JSON, which would keep a few of its packages.
    if (
        type(value) is dict
        and "lockfileVersion" in value
        and type(value.get("packages", value.get("dependencies"))) is dict
        and text.startswith("{\n")
    ) or value is NOT_JSON:
        return _Block(text, NOT_JSON, sibling=False, needs_notice=False)
    if type(value) is dict:
        owned = "truncation" in value
        return _Block(text, value, sibling=not owned, needs_notice=owned)
    return _Block(text, value, sibling=False, needs_notice=True)


def _allocate(lengths: list[int], floors: list[int], avail: int) -> list[int] | None:
    """Each block's character target: small blocks whole, the rest split by size; None if the
    shrunk blocks' floors alone do not fit."""
    n = len(lengths)
    targets = list(lengths)
    open_ = set(range(n))
    rem = avail
    while open_:
        if sum(lengths[i] for i in open_) <= rem:
            return targets
        share = rem // len(open_)
        whole = [i for i in open_ if lengths[i] <= share]
        if not whole:
            break
        for i in whole:
            open_.remove(i)
            rem -= lengths[i]
    floor_total = sum(floors[i] for i in open_)
    if floor_total > rem:
        return None
    spare = rem - floor_total
    weights = {i: max(1, lengths[i] - floors[i]) for i in open_}
    weight_total = sum(weights.values())
    for i in open_:
        targets[i] = floors[i] + spare * weights[i] // weight_total
    return targets


@dataclass(slots=True)
class _Outcome:
    texts: list[str]
    shrunk_json: list[tuple[int, str]]  # (block index, compact JSON without the record)
    counters: Condensed
    strategies: list[str]  # each shrunk block's, "text:..." or "json:..."


def _shrink_blocks(
    blocks: list[_Block],
    targets: list[int],
    record_room: int,
    hint: RecoveryHint,
    plans: Plans,
    terms: Sequence[str],
    soft: int,
) -> _Outcome:
    totals = Condensed(None)
    out = _Outcome([b.text for b in blocks], [], totals, [])

    for i, block in enumerate(blocks):
        target = targets[i]
        if len(block.text) <= target:
            continue
        if block.value is NOT_JSON:
            if block.outliner is None:
                block.outliner = Outliner(block.text, terms)
            shaped = block.outliner.pack(
                target, hint, first_line=block.first_line, first_char=block.first_char, soft=soft
            )
            if shaped is None:
                cut = head_tail(block.text, target, lambda omitted: render_text_marker(omitted, hint))
                if cut is None or target < _MIN_PREVIEW:
                    raise ShrinkError(
                        f"A text block of {len(block.text)} characters cannot be previewed in {target} "
                        "characters next to its recovery marker; raise the budget."
                    )
                shaped = cut, "text:head-tail"
            out.texts[i] = shaped[0]
            out.strategies.append(shaped[1])
            continue
        room = target - (record_room if block.sibling else 0)
        text = _condense_to(block.value, room, plans)
        if text is None and type(block.value) is dict and max(map(len, block.value), default=0) >= room:
            # A copy keeps every top-level key: one longer than the room leaves none that fits, so the
            # object is cut as text is (head and tail, the recovery marker between), never passed whole.
            block.value, block.sibling, block.needs_notice = NOT_JSON, False, False
            return _shrink_blocks(blocks, targets, record_room, hint, plans, terms, soft)
        if text is None:
            raise ShrinkError(
                f"No preview of a JSON block of {len(block.text)} characters fits in {target} characters "
                "with its truncation record; raise the budget."
            )
        condensed, rendered = text
        out.shrunk_json.append((i, rendered))
        out.texts[i] = rendered
        totals.items_omitted += condensed.items_omitted
        totals.keys_omitted += condensed.keys_omitted
        totals.strings_truncated += condensed.strings_truncated
        for name in condensed.dropped:
            totals.dropped.setdefault(name, None)
        out.strategies.append("json:" + condensed.strategy)
    return out


def _condense_to(value: object, room: int, plans: Plans) -> tuple[Condensed, str] | None:
    """The best copy of ``value`` whose compact JSON fits ``room``, and that JSON; or None when not even
    the smallest copy fits. The priced packing goes first; the limit search when the document is not a
    container or the priced packing found no copy (the items that must stay did not fit: the limit
    search can still drop keys and collapse levels). A retry tries first what won before."""
    goal = room
    for _ in range(_ATTEMPTS):
        if goal < 2:
            return None
        for way in (limit_search, priced) if plans.winner is limit_search else (priced, limit_search):
            condensed = way(value, goal, plans)
            if condensed is not None:
                plans.winner = way
                break
        else:
            return None
        rendered = dumps_text(condensed.value)
        if len(rendered) <= room:
            return condensed, rendered
        goal -= len(rendered) - room + max(8, room // 50)
    return None


def _record_json(report: Report, hint: RecoveryHint, kind: str, compact: bool) -> str:
    return ',"truncation":' + dumps_text(truncation_record(report, hint, kind, compact=compact))


def shrink_texts(
    texts: list[str],
    budget: int,
    hint: RecoveryHint,
    query_terms: Sequence[str] = (),
    *,
    block_limit: int | None = None,
    above: int | None = None,
) -> Shrunk | None:
    """Shrink ``texts`` so that they and the notice fit ``budget`` characters together.

    Text in a recognised format becomes an outline (``_outline``); ``query_terms`` (from the call's
    arguments, see ``query_terms``) pick the lines kept first when lines must be left out.
    ``block_limit`` (``--truncate-chars``) also caps each text block on its own, its in-block record or
    marker included, and the whole at ``block_limit`` per block, so a notice of its own counts too: a
    one-block result shows at most ``block_limit`` characters. The stricter of the two applies. None
    when everything already fits. Otherwise ``sum(map(len, result.texts)) + len(result.notice or "")``
    is at most ``budget`` and no text is longer than ``block_limit``; raises ``ShrinkError`` when no
    useful preview plus notice fits.

    ``above`` (``shrink_above``) sizes previews by value: a result over ``above`` characters gets a
    preview of what it is worth (``_value``: landmarks and a little support, JSON field names and
    counts), at most ``budget``, even when it fits the budget; one that fits and would not save
    ``MIN_SAVING`` of its size, and ``MIN_SAVING_CHARS`` (a turn's worth), that way stays None (shown
    whole).
    """
    if block_limit is not None:  # a real maximum: a result shows at most N characters per text block, its
        budget = min(budget, block_limit * len(texts))  # marker and any recovery notice included
    original = sum(len(t) for t in texts)
    fits = original <= budget and (block_limit is None or max(map(len, texts), default=0) <= block_limit)
    if fits and (above is None or original <= above):
        return None
    blocks = [_classify(t) for t in texts]
    if above is None or original <= above:
        return _fit(blocks, budget, hint, query_terms, block_limit)
    goal = 0  # what the blocks' previews are worth together (``_value``), record room included
    for block in blocks:
        if block.value is NOT_JSON:
            if block.outliner is None:
                block.outliner = Outliner(block.text, query_terms)
            worth = text_goal(block.outliner, len(block.text), fits)
            goal += len(block.text) if worth is None else worth
        else:
            block.pins = pins(block.value, query_terms)
            # the pinned items' room is added, up to 600 characters each: they do not push out what the
            # preview shows anyway
            goal += min(len(block.text), JSON_CHARS + pinned_chars(block.value, block.pins, 600))
    goal = min(budget, goal)
    keep = min(original * (1 - MIN_SAVING), original - MIN_SAVING_CHARS)
    if fits and goal > keep:
        return None
    while True:
        try:
            shrunk: Shrunk | None = _fit(blocks, goal, hint, query_terms, block_limit)
        except ShrinkError:
            shrunk = None
        if goal >= budget or (shrunk is not None and not shrunk.report.dropped_fields):
            break
        goal = min(budget, goal * 2)  # every field name shown, or no useful preview: more room
    if shrunk is None:
        return None if fits else _fit(blocks, budget, hint, query_terms, block_limit)
    if fits and sum(map(len, shrunk.texts)) + len(shrunk.notice or "") > keep:
        return None
    return shrunk


def _fit(
    blocks: list[_Block], budget: int, hint: RecoveryHint, query_terms: Sequence[str], block_limit: int | None
) -> Shrunk:
    """``shrink_texts`` at one budget, the blocks classified: the preview, or ShrinkError."""
    lengths = [len(b.text) for b in blocks]
    original = sum(lengths)
    # Recovery reads a pointer inside the text blocks joined: one JSON block is one document.
    single = blocks[0].value if len(blocks) == 1 and blocks[0].value is not NOT_JSON else None
    hint = replace(hint, pointer=example_pointer(single) if single is not None else None)
    line = 1
    char = 0
    for block in blocks:  # line numbers and offsets of the texts joined by "\n", as recovery reads them
        block.first_line = line
        block.first_char = char
        line += block.text.count("\n") + 1
        char += len(block.text) + 1
    # the longest record (and notice) there can be: every count the original's size, a long strategy
    worst = Report(
        True, True, original, budget, original, original, original, (), "json:items=1000,strings=120,depth=8"
    )
    kinds = {"text" if b.value is NOT_JSON else "json" for b in blocks}
    kind = "mixed" if len(kinds) > 1 else next(iter(kinds))
    compact = min(budget, block_limit or budget) < COMPACT_BELOW
    # (Only JSON blocks carry a record or need the notice: text blocks alone never read these two.)
    record_room = len(_record_json(worst, hint, kind, compact)) if "json" in kinds else 0
    notice_room = len(render_notice(worst, hint)) if "json" in kinds else 0
    slack = 0
    fitted: Shrunk | None = None
    fitted_total = refills = 0
    found = {k: v for b in blocks if b.pins for k, v in b.pins.items()}
    plans = Plans(terms=tuple(query_terms), pins=found)  # what condensing learnt, kept across attempts
    for _ in range(_ATTEMPTS):
        targets = _targets(blocks, lengths, budget - slack, record_room, notice_room, hint, block_limit)
        if targets is None and (sum(b.sibling for b in blocks) > 1 or block_limit is not None):
            # No room for a record in every object (or in a block of --truncate-chars): give the
            # record once, in the notice.
            for block in blocks:
                if block.sibling:
                    block.sibling, block.needs_notice = False, True
            targets = _targets(blocks, lengths, budget - slack, record_room, notice_room, hint, block_limit)
        if targets is None:
            break
        soft = max(SOFT_CHARS, budget // 5)  # a raised budget raises the size by value too
        outcome = _shrink_blocks(blocks, targets, record_room, hint, plans, query_terms, soft)
        shrunk = _assemble(blocks, outcome, original, hint, compact)
        total = sum(len(t) for t in shrunk.texts) + len(shrunk.notice or "")
        if total <= budget:
            content = sum(len(t) for t in outcome.texts)
            reserved = record_room * sum(blocks[i].sibling for i, _ in outcome.shrunk_json)
            reserved += notice_room if shrunk.notice is not None else 0
            unused = min(reserved - (total - content), budget - total)
            if fitted is None or total > fitted_total:
                fitted, fitted_total = shrunk, total
            if refills >= _REFILLS or unused <= _REFILL:
                return fitted
            # The record was reserved for the worst case; offer its unused room to the preview.
            refills += 1
            slack -= unused - 2
        elif fitted is not None:
            return fitted
        else:
            slack += total - budget + 16
    if fitted is not None:
        return fitted
    raise ShrinkError(
        f"{len(blocks)} text block(s) of {original} characters cannot be previewed with their recovery "
        f"notice in {budget} characters; raise the budget."
    )


def _targets(
    blocks: list[_Block],
    lengths: list[int],
    avail: int,
    record_room: int,
    notice_room: int,
    hint: RecoveryHint,
    block_limit: int | None = None,
) -> list[int] | None:
    """Each block's target. Which blocks shrink decides whether a notice is needed, and back.

    With ``block_limit`` no target exceeds it; a block whose floor is above it cannot be previewed."""
    floors = [
        (record_room if b.sibling else 0) + _MIN_PREVIEW
        if b.value is not NOT_JSON
        else len(render_text_marker(len(b.text), hint)) + _MIN_PREVIEW + 2
        for b in blocks
    ]
    needs_notice = False
    targets: list[int] | None = None
    for _round in range(3):
        targets = _allocate(lengths, floors, avail - (notice_room if needs_notice else 0))
        if targets is None:
            return None
        if block_limit is not None:
            if any(lengths[i] > block_limit and floors[i] > block_limit for i in range(len(blocks))):
                return None
            targets = [min(t, block_limit) for t in targets]
        shrinking = [lengths[i] > targets[i] for i in range(len(blocks))]
        wanted = any(shrinking[i] and b.needs_notice for i, b in enumerate(blocks))
        if wanted == needs_notice:
            break
        needs_notice = wanted
    return targets


def _assemble(
    blocks: list[_Block], outcome: _Outcome, original: int, hint: RecoveryHint, compact: bool
) -> Shrunk:
    kinds = {strategy.split(":", 1)[0] for strategy in outcome.strategies}
    kind = "mixed" if len(kinds) > 1 else next(iter(kinds), "text")
    counters = outcome.counters
    dropped = tuple(
        name if len(name) <= MAX_FIELD_NAME_CHARS else name[: MAX_FIELD_NAME_CHARS - 1] + "…"
        for name in list(counters.dropped)[:MAX_DROPPED_FIELDS]
    )
    pruned = "text" in kinds or bool(
        counters.items_omitted or counters.keys_omitted or counters.strings_truncated
    )
    strategy = ";".join(dict.fromkeys(outcome.strategies))
    shrunk_indexes = {i for i, _ in outcome.shrunk_json}
    needs_notice = any(blocks[i].needs_notice for i in shrunk_indexes)
    report = Report(
        pruned=pruned,
        fits=True,
        original_chars=original,
        shown_chars=0,
        items_omitted=counters.items_omitted,
        keys_omitted=counters.keys_omitted,
        strings_truncated=counters.strings_truncated,
        dropped_fields=dropped,
        strategy=strategy,
    )
    texts: list[str] = []
    notice: str | None = None
    inline = [(i, rendered) for i, rendered in outcome.shrunk_json if blocks[i].sibling]  # records inline
    for _ in range(4):  # shown_chars counts itself; settle its digits
        texts = list(outcome.texts)
        if inline:
            record = _record_json(report, hint, kind, compact)
            for i, rendered in inline:
                texts[i] = rendered[:-1] + (record if len(rendered) > 2 else record[1:]) + "}"
        notice = render_notice(report, hint) if needs_notice else None
        shown = sum(len(t) for t in texts) + len(notice or "")
        if shown == report.shown_chars:
            break
        report = replace(report, shown_chars=shown)
    return Shrunk(texts, notice, truncation_record(report, hint, kind, compact=compact), report)
