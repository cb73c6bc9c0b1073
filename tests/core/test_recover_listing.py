"""A recover tool that costs little to carry (issue 21 item 5): the model carries it on every turn,
once per server it is listed for, so its listing (name, description, inputSchema) is about 100 o200k
tokens: three servers add at most 300. It lists the arguments an agent composes itself; the others
are taken all the same, and every preview's notice, every answer and every error says the exact call."""

from __future__ import annotations

import json

import pytest

from mcpsqueeze import UsageError
from mcpsqueeze.accounting._tokens import count_tokens
from mcpsqueeze.core import RecoverRequest, recover_tool_definition
from mcpsqueeze.core._recover import LISTED_ARGUMENTS
from mcpsqueeze.core._request import _PARSERS

RID = "0" * 32


def model_view(tools: list[dict[str, object]]) -> str:
    """As scripts/bench/peers.py counts a listing: what a client turns into the model's tool definitions."""
    return json.dumps([{k: t.get(k) for k in ("name", "description", "inputSchema")} for t in tools])


def test_the_recover_tool_adds_at_most_100_o200k_tokens_to_a_listing() -> None:
    backend = [{"name": "read_file", "description": "Read a file.", "inputSchema": {"type": "object"}}]
    ours = recover_tool_definition("squeeze_recover")
    growth = count_tokens(model_view([*backend, ours])) - count_tokens(model_view(backend))
    assert growth <= 100, growth
    assert count_tokens(json.dumps(ours, ensure_ascii=False)) <= 150  # with its annotations


def test_it_lists_arguments_a_request_parses_and_names_the_search_ones() -> None:
    definition = recover_tool_definition("squeeze_recover")
    properties = definition["inputSchema"]["properties"]
    assert list(properties) == list(LISTED_ARGUMENTS) and set(properties) <= set(_PARSERS)
    assert "additionalProperties" not in definition["inputSchema"]  # the others reach the parser
    for word in ("lines", "pointer", "grep", "search"):
        assert word in definition["description"]


def test_every_argument_it_does_not_list_is_taken() -> None:
    request = RecoverRequest.parse(
        {
            "response_id": [RID, RID],
            "pointer": ["/a", "/b"],
            "query": "x",
            "offset": 1,
            "length": 2,
            "page": 0,
        }
    )
    assert RecoverRequest.parse(request.arguments()) == request
    found = RecoverRequest.parse(
        {"response_id": RID, "grep": "x", "ignore_case": True, "context": 1, "skip": 2}
    )
    assert (found.ignore_case, found.context, found.skip) == (True, 1, 2)


@pytest.mark.parametrize("wrong", ["line", "ranges", "regex", "path"])
def test_an_unknown_argument_gets_an_error_that_teaches_every_argument(wrong: str) -> None:
    with pytest.raises(UsageError) as caught:
        RecoverRequest.parse({"response_id": RID, wrong: "1"})
    message = str(caught.value)
    assert f"unknown argument {wrong!r}" in message
    for name in _PARSERS:  # each with what it takes
        assert f"{name}: " in message
    if wrong == "line":
        assert "did you mean 'lines'?" in message


def test_lines_is_taken_as_a_model_may_write_it() -> None:
    assert RecoverRequest.parse({"response_id": RID, "lines": 120}).arguments()["lines"] == "120"
    assert (
        RecoverRequest.parse({"response_id": RID, "lines": ["10-20", 40]}).arguments()["lines"] == "10-20,40"
    )
    with pytest.raises(UsageError, match="such as 120-180"):
        RecoverRequest.parse({"response_id": RID, "lines": {"from": 1}})
