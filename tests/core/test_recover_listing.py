"""A recover tool that costs little to carry (issue 21 item 5): its whole listing entry (name, title,
description, inputSchema, annotations) is at most 300 o200k tokens, counted by our own counter."""

from __future__ import annotations

import json

from mcpsqueeze.accounting._tokens import count_tokens
from mcpsqueeze.core import RecoverRequest, recover_tool_definition


def test_the_recover_tool_listing_is_at_most_300_o200k_tokens() -> None:
    definition = recover_tool_definition("squeeze_recover")
    assert count_tokens(json.dumps(definition, ensure_ascii=False)) <= 300
    described = {"description": definition["description"], "inputSchema": definition["inputSchema"]}
    assert count_tokens(json.dumps(described, ensure_ascii=False)) <= 300


def test_the_schema_lists_exactly_the_arguments_a_request_parses() -> None:
    properties = recover_tool_definition("squeeze_recover")["inputSchema"]["properties"]
    from mcpsqueeze.core._request import _PARSERS

    request = RecoverRequest.parse(
        {"response_id": ["a" * 32], "pointer": ["/x"], "query": "x", "offset": 0, "length": 1, "page": 0}
    )
    assert set(request.arguments()) | {"lines"} <= set(properties)
    assert set(_PARSERS) == set(properties)  # every argument a request parses is listed, and no other
