"""The stdio channels forward an unchanged result's line as it came, and serialise anything changed."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcpsqueeze._jsonbytes import dumps, loads
from mcpsqueeze.transports._jsonrpc import line_of, parse_line, with_id

LINE = (
    b'{"jsonrpc": "2.0", "id": 7, "result": {"content": [{"type": "text", "text": "caf\\u00e9"}], "x": null}}'
)


def test_an_unchanged_result_goes_out_byte_for_byte() -> None:
    message = parse_line(LINE)
    assert isinstance(message, dict)
    assert line_of(message) == LINE + b"\n"


def test_a_result_whose_id_was_replaced_in_place_is_serialised_with_the_new_id() -> None:
    message = parse_line(LINE)
    assert isinstance(message, dict)
    message["id"] = 1234567  # a new object: the old line would carry the wrong id
    out = json.loads(line_of(message))
    assert out["id"] == 1234567 and out["result"]["content"][0]["text"] == "café"


def test_a_rebuilt_message_is_serialised() -> None:
    message = parse_line(LINE)
    assert isinstance(message, dict)
    rebuilt = {**message, "result": {"content": []}}
    assert json.loads(line_of(rebuilt))["result"] == {"content": []}


def test_lines_with_non_finite_numbers_or_requests_are_never_forwarded_raw() -> None:
    nan = b'{"jsonrpc":"2.0","id":1,"result":{"v":NaN}}'
    request = b'{"jsonrpc": "2.0", "id": 2, "method": "tools/list"}'
    assert not isinstance(parse_line(nan), dict)  # strict parsing refuses NaN outright
    message = parse_line(request)
    assert isinstance(message, dict)
    assert line_of(message) != request + b"\n"


# -- the id splice: a remapped id without re-serialising the result ---------------------------------------

JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.text(max_size=8)
    | st.sampled_from(["id", '"id":1}', "\\u0069d"]),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(
            st.sampled_from(["id", "x", "text", "i\u0064"]) | st.text(max_size=4), inner, max_size=4
        )
    ),
    max_leaves=12,
)
NEW_IDS = st.integers() | st.text(max_size=6) | st.floats(allow_nan=False, allow_infinity=False)


def _member(key: str, value: Any, spaced: bool, ascii_only: bool) -> bytes:
    sep = ": " if spaced else ":"
    return (
        json.dumps(key, ensure_ascii=ascii_only) + sep + json.dumps(value, ensure_ascii=ascii_only)
    ).encode()


@given(
    result=st.dictionaries(st.text(max_size=5), JSON, max_size=4),
    backend_id=st.integers(min_value=0, max_value=10**12),
    new_id=NEW_IDS,
    order=st.sampled_from(["head", "bare-head", "tail", "middle"]),
    spaced=st.booleans(),
    ascii_only=st.booleans(),
    duplicate=st.sampled_from([None, "id", "\\u0069d", "i\\u0064"]),
)
@settings(max_examples=400, deadline=None)
def test_a_spliced_line_parses_to_exactly_the_message_rebuilt_with_the_new_id(
    result: dict[str, Any],
    backend_id: int,
    new_id: Any,
    order: str,
    spaced: bool,
    ascii_only: bool,
    duplicate: str | None,
) -> None:
    members = {
        "jsonrpc": _member("jsonrpc", "2.0", spaced, ascii_only),
        "id": _member("id", backend_id, spaced, ascii_only),
        "result": _member("result", result, spaced, ascii_only),
    }
    names = {
        "head": ["jsonrpc", "id", "result"],
        "bare-head": ["id", "jsonrpc", "result"],
        "tail": ["result", "jsonrpc", "id"],
        "middle": ["result", "id", "jsonrpc"],
    }[order]
    parts = [members[n] for n in names]
    if duplicate is not None:  # a second top-level id member (a parser keeps the last one)
        parts.insert(
            len(parts) - 1 if order == "tail" else len(parts), f'"{duplicate}":{backend_id}'.encode()
        )
    line = b"{" + (b", " if spaced else b",").join(parts) + b"}"
    message = parse_line(line)
    assert isinstance(message, dict)
    out = with_id(message, new_id)
    assert json.loads(line_of(out)) == {**message, "id": new_id}
    assert loads(line_of(out)) == {**message, "id": new_id}
    if order == "tail" and duplicate is None and b"NaN" not in line and b"Infinity" not in line:
        assert type(out) is not dict  # the TypeScript SDK's layout is always spliced (and kept raw)
        assert out.line_if_unchanged() is not None  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        (  # Python SDK (pydantic): id after jsonrpc; the text quotes "id" (escaped, never matched)
            b'{"jsonrpc":"2.0","id":41,"result":{"content":[{"type":"text","text":"a \\"id\\":41"}]}}',
            b'{"jsonrpc":"2.0","id":"agent-7","result":{"content":[{"type":"text","text":"a \\"id\\":41"}]}}',
        ),
        (  # TypeScript SDK: id last; a nested "id" key does not matter there
            b'{"result":{"content":[],"structuredContent":{"id":41}},"jsonrpc":"2.0","id":41}',
            b'{"result":{"content":[],"structuredContent":{"id":41}},"jsonrpc":"2.0","id":"agent-7"}',
        ),
        (
            b'{"jsonrpc": "2.0", "id": 41, "result": {"content": []}}',
            b'{"jsonrpc": "2.0", "id": "agent-7", "result": {"content": []}}',
        ),
    ],
)
def test_the_sdks_answers_keep_their_bytes_and_change_only_the_id(line: bytes, expected: bytes) -> None:
    message = parse_line(line)
    assert isinstance(message, dict)
    assert line_of(with_id(message, "agent-7")) == expected + b"\n"  # spliced, not re-serialised


def test_an_id_the_patterns_cannot_place_for_certain_is_re_serialised() -> None:
    line = b'{"jsonrpc":"2.0","id":41,"result":{"structuredContent":{"id":41},"content":[]},"x":1}'
    message = parse_line(line)
    assert isinstance(message, dict)
    out = with_id(message, 9)
    # a nested "id" key and the id not last: no splice, the message is re-serialised
    assert line_of(out) == dumps({**message, "id": 9}) + b"\n"
    assert json.loads(line_of(out)) == {**message, "id": 9}


def test_a_result_that_mentions_nan_in_a_string_still_keeps_its_bytes() -> None:
    # strict parsing refuses NaN and Infinity literals, so the words inside a string need no search
    line = (
        b'{"jsonrpc": "2.0", "id": 3, "result": {"content": [{"type": "text", "text": "NaN or Infinity"}]}}'
    )
    message = parse_line(line)
    assert isinstance(message, dict)
    assert line_of(with_id(message, 8)) == line.replace(b'"id": 3', b'"id": 8') + b"\n"
