"""Projection: keep only the part of a JSON result that a JMESPath expression selects. Pure, no I/O.

JMESPath (the `jmespath` package) rather than jq: it is pure Python (no binary wheel to match the
platform), fully specified and deterministic (one compliance suite, no version drift between
implementations), and an expression can only select and reshape data — it cannot loop forever, read
files or environment, or run code — so it is safe to evaluate on untrusted results with expressions
that came from a model or a config file. jq is more familiar to shell users; they still have it in the
shell door (`mcpsq recover ID | jq ...`).
"""

from __future__ import annotations

import functools
import json
from typing import Any

import jmespath
import jmespath.exceptions

from ._errors import UsageError

__all__ = ["MAX_QUERY_CHARS", "ProjectionError", "compile_query", "project", "project_text"]

#: An expression longer than this is refused (no legitimate projection needs more).
MAX_QUERY_CHARS = 4_096


class ProjectionError(UsageError):
    """The expression is malformed, or it does not apply to this result's data."""


@functools.lru_cache(maxsize=256)
def compile_query(expression: str) -> Any:
    """The parsed expression (cached: a policy's query runs on every call of its tool)."""
    if not isinstance(expression, str) or not expression.strip():
        raise ProjectionError("query must be a non-empty JMESPath expression such as issues[].{key: key}")
    if len(expression) > MAX_QUERY_CHARS:
        raise ProjectionError(f"query is longer than {MAX_QUERY_CHARS} characters")
    try:
        return jmespath.compile(expression)
    except jmespath.exceptions.JMESPathError as exc:
        raise ProjectionError(f"query {expression!r} is not valid JMESPath: {exc}") from None


def project(document: Any, expression: str) -> Any:
    """`expression` applied to `document` (None when it selects nothing)."""
    parsed = compile_query(expression)
    try:
        return parsed.search(document)
    except jmespath.exceptions.JMESPathError as exc:
        raise ProjectionError(f"query {expression!r} does not apply to this result: {exc}") from None


def project_text(text: str, expression: str) -> str | None:
    """The projection of a JSON text, as compact-indented JSON; None when the text is not JSON."""
    try:
        document = json.loads(text)
    except (ValueError, RecursionError):
        return None
    return json.dumps(project(document, expression), ensure_ascii=False, indent=1)
