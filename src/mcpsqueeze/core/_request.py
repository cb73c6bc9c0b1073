"""One recover request, parsed and bounded once, whatever door it came through.

Every door turns its protocol (MCP arguments, a query string, shell flags, Python keywords) into an
arguments object and calls ``RecoverRequest.parse``, the one place that checks types and bounds: a
hostile value fails the same way everywhere, as a UsageError naming the bound. Pure and stdlib-only
(``mcpsq recover`` imports it). A new argument is one entry in ``_PARSERS``, one field below, and, when
it combines with others by a rule, one line in ``_check_combination``."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields
from typing import Any, TypedDict

from mcpsqueeze._errors import UsageError
from mcpsqueeze._lines import MAX_DIGITS, parse_line_range
from mcpsqueeze.recovery import is_response_id

__all__ = [
    "MAX_DIGITS",
    "MAX_IDS",
    "MAX_LINES_CHARS",
    "MAX_NUMBER",
    "MAX_PARTS",
    "MAX_POINTER_CHARS",
    "MAX_SEARCH_CHARS",
    "LineRange",
    "RecoverKeywords",
    "RecoverRequest",
]

#: MAX_DIGITS (from _lines): digits in any number a request names (a line, a pointer's array index, an
#: offset): 18 digits stay below 2**63, far below Python's 4,300-digit int limit.
MAX_NUMBER = 10**MAX_DIGITS - 1
#: A pointer longer than this is refused (a real one is a handful of segments).
MAX_POINTER_CHARS = 4_096
#: A ``lines`` value longer than this is refused.
MAX_LINES_CHARS = 1_000
#: A ``search`` longer than this is refused (its words are capped at 24 anyway).
MAX_SEARCH_CHARS = 1_000
#: Originals one recovery may name, and parts (id x pointer x line range) one answer may hold.
MAX_IDS = 20
MAX_PARTS = 50

_LONG_NUMBER = re.compile(f"[0-9]{{{MAX_DIGITS + 1},}}")


@dataclass(frozen=True, slots=True)
class LineRange:
    """Lines ``first`` to ``last`` of a text, counted from 1; ``last`` None reads to the end."""

    first: int
    last: int | None

    def __str__(self) -> str:
        if self.last == self.first:
            return str(self.first)
        return f"{self.first}-{'' if self.last is None else self.last}"


class RecoverKeywords(TypedDict, total=False):
    """The Python doors' keywords beside the response id (``Squeezer.recover(rid, **keywords)``, and
    ``recover_result``, ``Client.recover``): the request's arguments, as the recover tool takes them."""

    pointer: str | list[str]
    query: str
    offset: int
    length: int
    lines: str
    page: int
    grep: str
    search: str
    ignore_case: bool
    context: int
    skip: int


@dataclass(frozen=True, slots=True)
class RecoverRequest:
    """What a recovery asks for: originals (``response_ids``, in order), each optionally narrowed to JSON
    nodes (``pointers``), a JMESPath projection (``query``), a character window (``offset``,
    ``length``) or line ranges (``lines``), every (id, pointer, range) one part; or one original
    searched (``grep`` with ``ignore_case``, or ``search``; ``context``, ``skip``). Built only by
    ``parse``, so always within bounds."""

    response_ids: tuple[str, ...]
    pointers: tuple[str, ...] = ()
    query: str | None = None
    offset: int | None = None
    length: int | None = None
    lines: tuple[LineRange, ...] = ()
    page: int | None = None
    grep: str | None = None
    search: str | None = None
    ignore_case: bool | None = None
    context: int | None = None
    skip: int | None = None

    @classmethod
    def parse(cls, arguments: object) -> RecoverRequest:
        """The request ``arguments`` (the recover tool's arguments) describe: numbers as JSON integers or
        digit strings, ``response_id`` and ``pointer`` one or a list, ``lines`` one or several ranges
        ("10-20,40-60,300-"). UsageError naming the argument and its bound."""
        if not isinstance(arguments, Mapping):
            raise UsageError('the recover arguments must be an object such as {"response_id": "..."}')
        unknown = [key for key in arguments if key not in _PARSERS]
        if unknown:
            raise UsageError(_unknown(str(unknown[0])))
        values = {
            field: parser(arguments[name])
            for name, (field, parser) in _PARSERS.items()
            if name in arguments and arguments[name] is not None
        }
        if "response_ids" not in values:
            raise UsageError("response_id is required: the 32 hex characters shown in the truncation notice")
        request = cls(**values)
        _check_combination(request)
        return request

    def arguments(self) -> dict[str, Any]:
        """The recover tool's arguments for this request (what ``parse`` reads back to an equal one)."""
        out: dict[str, Any] = {}
        for name, (field, _parser) in _PARSERS.items():
            value = getattr(self, field)
            if value is None or value == ():
                continue
            if field == "lines":
                out[name] = ",".join(str(r) for r in value)
            elif isinstance(value, tuple):
                out[name] = value[0] if len(value) == 1 else list(value)
            else:
                out[name] = value
        return out

    @property
    def selects(self) -> bool:
        """True when the request asks for a part rather than the whole original."""
        return any(
            getattr(self, f.name) not in (None, ())
            for f in fields(self)
            if f.name not in ("response_ids", "page")
        )

    @property
    def part_count(self) -> int:
        """How many parts the answer has: one per (id, pointer, line range)."""
        return len(self.response_ids) * max(len(self.pointers), 1) * max(len(self.lines), 1)


def _one_or_many(name: str, one: Callable[[object], str], most: int) -> Callable[[object], tuple[str, ...]]:
    """A parser of a value that may be one string or a list of at most ``most`` of them."""

    def parse(value: object) -> tuple[str, ...]:
        if isinstance(value, (list, tuple)):
            if not value or len(value) > most:
                raise UsageError(f"{name} takes one value or a list of 1 to {most}, not {len(value)}")
            return tuple(one(item) for item in value)
        return (one(value),)

    return parse


def _response_id(value: object) -> str:
    if not is_response_id(value):
        raise UsageError("response_id must be the 32 hex characters shown in the truncation notice")
    return value


def _pointer(value: object) -> str:
    if not isinstance(value, str):
        raise UsageError("pointer must be a string such as /issues/17 (an RFC 6901 JSON pointer)")
    if len(value) > MAX_POINTER_CHARS:
        raise UsageError(f"pointer is longer than {MAX_POINTER_CHARS} characters; name a shorter path")
    if value and not value.startswith("/"):
        raise UsageError(
            f"pointer {value[:80]!r} must be empty (the whole document) or start with '/', e.g. /items/0"
        )
    if _LONG_NUMBER.search(value):
        raise UsageError(f"pointer has a number longer than {MAX_DIGITS} digits; no array is that long")
    return value


def _query(value: object) -> str:
    from mcpsqueeze._projection import check_query  # the bounds only; jmespath loads when it compiles

    if not isinstance(value, str):
        raise UsageError("query must be a string: a JMESPath expression such as issues[].key")
    check_query(value)
    return value


def _number(name: str) -> Callable[[object], int]:
    def parse(value: object) -> int:
        if isinstance(value, str) and value.isascii() and value.isdigit() and len(value) <= MAX_DIGITS:
            return int(value)
        if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= MAX_NUMBER:
            return value
        raise UsageError(f"{name} must be a whole number, 0 or more, of at most {MAX_DIGITS} digits")

    return parse


def _lines(value: object) -> tuple[LineRange, ...]:
    # Taken liberally, as a model may write it: one line as a number, several ranges as a list.
    if isinstance(value, int) and not isinstance(value, bool):
        value = str(value)
    elif (
        isinstance(value, (list, tuple))
        and value
        and all(isinstance(v, str) or (isinstance(v, int) and not isinstance(v, bool)) for v in value)
    ):
        value = ",".join(map(str, value))
    if not isinstance(value, str):
        raise UsageError("lines must be a string such as 120-180 (or several: 10-20,40-60,300-)")
    if len(value) > MAX_LINES_CHARS:
        raise UsageError(f"lines is longer than {MAX_LINES_CHARS} characters")
    ranges = value.split(",")
    if len(ranges) > MAX_PARTS:
        raise UsageError(f"lines names more than {MAX_PARTS} ranges; ask for at most {MAX_PARTS} at once")
    return tuple(LineRange(*parse_line_range(spec)) for spec in ranges)


def _grep(value: object) -> str:
    from ._search import check_pattern  # RE2 compiles it: a pattern it cannot run fails here

    check_pattern(value)
    assert isinstance(value, str)
    return value


def _search(value: object) -> str:
    if not isinstance(value, str) or not value.strip():
        raise UsageError("search must be words to look for, such as 'parse error' (grep takes a regex)")
    if len(value) > MAX_SEARCH_CHARS:
        raise UsageError(f"search is longer than {MAX_SEARCH_CHARS} characters; give a few words")
    return value


def _ignore_case(value: object) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.lower() in _FLAG_WORDS:
        return _FLAG_WORDS[value.lower()]
    raise UsageError("ignore_case must be true or false")


_FLAG_WORDS = {"true": True, "1": True, "yes": True, "false": False, "0": False, "no": False}


def _context(value: object) -> int:
    from ._search import MAX_CONTEXT

    number = _number("context")(value)
    if number > MAX_CONTEXT:
        raise UsageError(f"context must be at most {MAX_CONTEXT} lines")
    return number


def _check_combination(request: RecoverRequest) -> None:
    if request.lines and (request.offset is not None or request.length is not None):
        raise UsageError("give either lines or offset/length, not both")
    # grep or search, on one original (or one part of it), paged by skip (not by page)
    finds = [name for name in ("grep", "search") if getattr(request, name) is not None]
    if len(finds) == 2:
        raise UsageError("give either grep (a regular expression) or search (words), not both")
    if not finds:
        extras = [name for name in ("ignore_case", "context", "skip") if getattr(request, name) is not None]
        if extras:
            raise UsageError(f"{extras[0]} goes with grep or search; give one of them too")
    else:
        others = [
            n for n in ("lines", "offset", "length", "query", "page") if getattr(request, n) not in (None, ())
        ]
        if others:
            raise UsageError(
                f"{finds[0]} searches the original (or the part pointer names), so it does not combine "
                f"with {others[0]}; search first, then read what it found with lines or pointer "
                "(its answer pages with skip)"
            )
        if len(request.response_ids) > 1 or len(request.pointers) > 1:
            raise UsageError(f"{finds[0]} searches one original, or the part one pointer names, at a time")
    if request.part_count > MAX_PARTS:
        raise UsageError(
            f"that asks for {request.part_count} parts (ids x pointers x line ranges); at most {MAX_PARTS} "
            "fit in one recovery"
        )


#: What each argument takes, for the error an unknown one gets (the tool's listing names only some:
#: core/_recover.py LISTED_ARGUMENTS). In the order of ``_PARSERS``.
_TAKES = {
    "response_id": 'the id its notice shows (a list for several: ["id1", "id2"])',
    "pointer": 'a JSON pointer such as "/items/0" (a list for several)',
    "query": 'a JMESPath projection such as "items[].{id: id, name: name}"',
    "offset": "with length: a window of characters",
    "length": "with offset: a window of characters",
    "lines": 'line ranges as the fold markers name them: "120-180", "120", "300-", "10-20,40-60"',
    "page": "the next page of a long answer, as its _meta mcpsqueeze/next says",
    "grep": 'a regular expression (RE2): the matching lines with their numbers, e.g. "def parse_\\w+"',
    "search": 'words, ranked: the best matching lines, e.g. "timeout retry"',
    "ignore_case": "true or false, with grep",
    "context": "lines shown around each grep or search match (default 2)",
    "skip": "matches to skip, as a search answer's next call says",
}


def _unknown(name: str) -> str:
    """The error an unknown argument gets: the closest known name, and what every argument takes."""
    import difflib  # only on this error

    close = difflib.get_close_matches(name, list(_PARSERS), n=1, cutoff=0.6)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    takes = "; ".join(f"{key}: {what}" for key, what in _TAKES.items())
    return (
        f"unknown argument {name[:40]!r}{hint}. The recover arguments are {takes}. Without any but "
        "response_id, the whole original; lines, pointer, query or offset/length read a part of it; "
        "grep or search find lines in it."
    )


# The arguments a request takes, in the order the tool lists them: name -> (field, its parser).
_PARSERS: dict[str, tuple[str, Callable[[object], Any]]] = {
    "response_id": ("response_ids", _one_or_many("response_id", _response_id, MAX_IDS)),
    "pointer": ("pointers", _one_or_many("pointer", _pointer, MAX_PARTS)),
    "query": ("query", _query),
    "offset": ("offset", _number("offset")),
    "length": ("length", _number("length")),
    "lines": ("lines", _lines),
    "page": ("page", _number("page")),
    "grep": ("grep", _grep),
    "search": ("search", _search),
    "ignore_case": ("ignore_case", _ignore_case),
    "context": ("context", _context),
    "skip": ("skip", _number("skip")),
}
