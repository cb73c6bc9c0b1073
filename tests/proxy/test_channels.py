"""The stdio channels forward an unchanged result's line as it came, and serialise anything changed."""

from __future__ import annotations

import json

from mcpsqueeze.proxy._channels import _line_of, _parse_line

LINE = (
    b'{"jsonrpc": "2.0", "id": 7, "result": {"content": [{"type": "text", "text": "caf\\u00e9"}], "x": null}}'
)


def test_an_unchanged_result_goes_out_byte_for_byte() -> None:
    message = _parse_line(LINE)
    assert isinstance(message, dict)
    assert _line_of(message) == LINE + b"\n"


def test_a_result_whose_id_was_replaced_in_place_is_serialised_with_the_new_id() -> None:
    message = _parse_line(LINE)
    assert isinstance(message, dict)
    message["id"] = 1234567  # a new object: the old line would carry the wrong id
    out = json.loads(_line_of(message))
    assert out["id"] == 1234567 and out["result"]["content"][0]["text"] == "café"


def test_a_rebuilt_message_is_serialised() -> None:
    message = _parse_line(LINE)
    assert isinstance(message, dict)
    rebuilt = {**message, "result": {"content": []}}
    assert json.loads(_line_of(rebuilt))["result"] == {"content": []}


def test_lines_with_non_finite_numbers_or_requests_are_never_forwarded_raw() -> None:
    nan = b'{"jsonrpc":"2.0","id":1,"result":{"v":NaN}}'
    request = b'{"jsonrpc": "2.0", "id": 2, "method": "tools/list"}'
    assert not isinstance(_parse_line(nan), dict)  # strict parsing refuses NaN outright (issue 12)
    message = _parse_line(request)
    assert isinstance(message, dict)
    assert _line_of(message) != request + b"\n"
