"""Projection: keep only the part of a JSON result a JMESPath expression selects. Pure. JMESPath, not jq: pure
Python, fully specified, and an expression can only select and reshape (no loops, files or code), so it is
safe on untrusted results with expressions from a model or a config file.
"""

from __future__ import annotations

import functools
import json
import time
from typing import Any

import jmespath
import jmespath.exceptions
import jmespath.lexer
import jmespath.visitor

from ._errors import UsageError

__all__ = [
    "ProjectionError",
    "check_query",
    "compile_query",
    "project",
    "project_text",
]

#: An expression longer than this is refused (no legitimate projection needs more).
MAX_QUERY_CHARS = 2_000
#: Brackets, parentheses, braces, projections (which nest: ``a[*][*]`` is two deep) and prefix operators
#: (``!``, ``&``) nested deeper than this are refused before the recursive parser sees them: 1,500
#: parentheses were a RecursionError.
MAX_QUERY_DEPTH = 64
#: Values an evaluation may produce (each list or object counts its items, each string its length),
#: beyond the document's own size: ``[@,@][]|[@,@][]|...`` doubles a list at every step.
MAX_QUERY_WORK = 5_000_000
#: Wall time an evaluation may take.
MAX_QUERY_SECONDS = 2.0
# Tokens that open a level the parser recurses into, and those that close one.
_OPENS = {"lbracket", "lparen", "lbrace", "filter", "flatten", "star", "not", "expref"}
_CLOSES = {"rbracket", "rparen", "rbrace"}


class ProjectionError(UsageError):
    """The expression is malformed, too big or too costly, or it does not apply to this result's data."""


def check_query(expression: str) -> None:
    """Refuse an expression that is empty, longer than MAX_QUERY_CHARS, or nested deeper than
    MAX_QUERY_DEPTH, before it is compiled (the bounds every door shares)."""
    if not isinstance(expression, str) or not expression.strip():
        raise ProjectionError("query must be a non-empty JMESPath expression such as issues[].{key: key}")
    if len(expression) > MAX_QUERY_CHARS:
        raise ProjectionError(
            f"query is longer than {MAX_QUERY_CHARS} characters; select less, or recover the whole "
            "original and filter it yourself"
        )
    depth = deepest = 0
    try:
        for token in jmespath.lexer.Lexer().tokenize(expression):
            kind = token["type"]
            if kind in _OPENS:
                depth += 1
            elif kind in _CLOSES:
                depth = max(depth - 1, 0)
            deepest = max(deepest, depth)
            if kind == "literal" and _nesting(token["value"]) > MAX_QUERY_DEPTH:
                deepest = MAX_QUERY_DEPTH + 1
            if deepest > MAX_QUERY_DEPTH:
                break
    except jmespath.exceptions.JMESPathError as exc:
        raise ProjectionError(f"query {expression[:200]!r} is not valid JMESPath: {exc}") from None
    except RecursionError:  # a JSON literal nested past the stdlib parser's limit
        deepest = MAX_QUERY_DEPTH + 1
    if deepest > MAX_QUERY_DEPTH:
        raise ProjectionError(
            f"query is nested more than {MAX_QUERY_DEPTH} levels deep (brackets, parentheses, braces, "
            "projections, ! and &); write a flatter expression"
        )


def _nesting(value: Any) -> int:
    """How deep a literal's JSON nests (iteratively: it may be deep)."""
    deepest = 0
    stack = [(value, 1)]
    while stack:
        node, level = stack.pop()
        if isinstance(node, (list, dict)):
            deepest = max(deepest, level)
            if deepest > MAX_QUERY_DEPTH:
                return deepest
            stack.extend((child, level + 1) for child in (node.values() if isinstance(node, dict) else node))
    return deepest


@functools.lru_cache(maxsize=256)
def compile_query(expression: str) -> Any:
    """The parsed expression (cached: a policy's query runs on every call of its tool)."""
    check_query(expression)
    try:
        return jmespath.compile(expression)
    except jmespath.exceptions.JMESPathError as exc:
        raise ProjectionError(f"query {expression[:200]!r} is not valid JMESPath: {exc}") from None
    except RecursionError:
        raise ProjectionError(
            f"query is nested too deeply to parse (keep it under {MAX_QUERY_DEPTH} levels)"
        ) from None


class _Bounded(jmespath.visitor.TreeInterpreter):  # type: ignore[misc]  # jmespath ships no types
    """The reference interpreter, counting what it produces and watching the clock."""

    def __init__(self, work: int) -> None:
        super().__init__()
        self._left = work
        self._deadline = time.monotonic() + MAX_QUERY_SECONDS
        self._steps = 0

    def visit(self, node: Any, *args: Any, **kwargs: Any) -> Any:
        value = super().visit(node, *args, **kwargs)
        if isinstance(value, (list, dict, str)):
            self._left -= len(value)
            if self._left < 0:
                raise ProjectionError(
                    f"query needs more work than allowed (it produced over {MAX_QUERY_WORK:,} values "
                    "beyond the document's size); select less, e.g. without repeating [@,@]"
                )
        self._steps += 1
        if not self._steps & 1023 and time.monotonic() > self._deadline:
            raise ProjectionError(
                f"query needs more work than allowed (it ran past {MAX_QUERY_SECONDS:g} s); select less"
            )
        return value


def project(document: Any, expression: str, *, size: int = 0) -> Any:
    """`expression` applied to `document` (None when it selects nothing), within the work bounds: ``size``
    (the document's characters) raises the work allowed to MAX_QUERY_WORK plus twice that size."""
    parsed = compile_query(expression)
    allowed = MAX_QUERY_WORK + 4 * size
    try:
        value = _Bounded(allowed).visit(parsed.parsed, document)
    except jmespath.exceptions.JMESPathError as exc:
        raise ProjectionError(f"query {expression[:200]!r} does not apply to this result: {exc}") from None
    except RecursionError:
        raise ProjectionError("query nests too deeply over this result's data; select less") from None
    limit = MAX_QUERY_WORK + 2 * size
    if result_size(value, limit) > limit:
        raise ProjectionError(
            f"query result is larger than {limit:,} characters (the original is {size:,}); a query that "
            "repeats its input (such as [@,@]) grows it: select less"
        )
    return value


def result_size(value: Any, limit: int) -> int:
    """About how many characters ``value`` takes as JSON, counted without writing it (shared parts
    count every time they appear, as JSON repeats them); stops counting past ``limit``."""
    total = 0
    stack = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, str):
            total += len(node) + 2
        elif isinstance(node, dict):
            total += 2 + 4 * len(node)
            for key, child in node.items():
                total += len(key)
                stack.append(child)
        elif isinstance(node, list):
            total += 2 + 2 * len(node)
            stack.extend(node)
        else:
            total += 4
        if total > limit:
            return total
    return total


def project_text(text: str, expression: str) -> str | None:
    """The projection of a JSON text, as compact-indented JSON; None when the text is not JSON."""
    try:
        document = json.loads(text)
    except (ValueError, RecursionError):
        return None
    return json.dumps(project(document, expression, size=len(text)), ensure_ascii=False, indent=1)
