"""Plain callables from tool schemas, for agent frameworks (pure: no server)."""

from __future__ import annotations

import inspect
from typing import Any

import pytest

from mcpsqueeze.api._functions import make_function, unique_names

SCHEMA = {
    "type": "object",
    "properties": {"query": {"type": "string"}, "limit": {"type": "integer"}},
    "required": ["query"],
}


def test_names_become_identifiers_and_clashes_are_suffixed_in_order() -> None:
    assert unique_names(["squeeze_recover", "squeeze_recover", "a-b.c", "1st", "class"]) == [
        "squeeze_recover",
        "squeeze_recover_2",
        "a_b_c",
        "_1st",
        "_class",
    ]


def test_a_function_has_the_tool_s_name_doc_schema_and_signature() -> None:
    seen: list[dict[str, Any]] = []
    function = make_function("gh_search", "Search.", SCHEMA, lambda args: seen.append(args) or "done")
    assert function.__name__ == "gh_search" and function.__doc__ == "Search."
    assert function.schema is SCHEMA  # type: ignore[attr-defined]
    assert str(inspect.signature(function)) == "(*, query: str, limit: int = None) -> str"
    assert function(query="x") == "done"
    assert seen == [{"query": "x"}]  # an optional argument left out is not sent as null


@pytest.mark.anyio
async def test_an_async_call_gives_a_coroutine_function() -> None:
    async def call(args: dict[str, Any]) -> str:
        return str(args)

    function = make_function("t", "", SCHEMA, call)
    assert inspect.iscoroutinefunction(function)
    assert await function(query="q", limit=2) == "{'query': 'q', 'limit': 2}"


def test_property_names_that_are_not_identifiers_keep_a_keyword_signature() -> None:
    schema = {"type": "object", "properties": {"page-size": {"type": "integer"}}}
    function = make_function("t", "", schema, lambda args: args)
    assert "kwargs" in str(inspect.signature(function))
    assert function(**{"page-size": 3}) == {"page-size": 3}
