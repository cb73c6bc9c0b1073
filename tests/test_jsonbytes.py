"""`_jsonbytes`: strict RFC 8259 reading, exact writing at any depth."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcpsqueeze._jsonbytes import _dumps_flat, dumps, loads

SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**40), max_value=10**40),  # beyond 64 bits too
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(  # lone surrogates, quotes, backslashes and control characters often
        alphabet=st.one_of(st.characters(exclude_categories=[]), st.sampled_from('\ud800\udfff\x00"\\é'))
    ),
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)


@settings(max_examples=150, deadline=None)
@given(value=VALUES, sort_keys=st.booleans())
def test_any_json_value_round_trips_exactly_and_the_flat_writer_equals_the_stdlib(
    value: Any, sort_keys: bool
) -> None:
    assert loads(dumps(value, sort_keys=sort_keys)) == value
    stdlib = json.dumps(value, sort_keys=sort_keys, separators=(",", ":"), allow_nan=False).encode("ascii")
    assert _dumps_flat(value, sort_keys) == stdlib


@pytest.mark.parametrize("depth", [254, 255, 1000, 1024])
def test_nesting_up_to_the_parse_limit_is_written_and_read_back(depth: int) -> None:
    data = b"[" * depth + b"]" * depth
    assert dumps(loads(data)) == data
    mixed = b'{"a":' * depth + b"1" + b"}" * depth
    assert dumps(loads(mixed)) == mixed


@pytest.mark.parametrize("depth", [1025, 10_000, 1_000_000])
def test_nesting_beyond_the_parse_limit_is_a_clear_value_error(depth: int) -> None:
    with pytest.raises(ValueError, match="nested deeper"):
        loads(b"[" * depth + b"]" * depth)
    with pytest.raises(ValueError, match="nested deeper"):  # the stdlib path (a big integer) too
        loads(b"[" * depth + b"123456789012345678901234567890" + b"]" * depth)


def test_writing_is_not_limited_by_the_recursion_limit() -> None:
    value: Any = []
    for _ in range(200_000):
        value = [value]
    assert dumps(value) == b"[" * 200_001 + b"]" * 200_001


@pytest.mark.parametrize(
    "data",
    [
        b"NaN",
        b"[Infinity]",
        b"[-Infinity]",
        b"1e400",
        b"[-1e400]",
        b'"\xed\xa0\x80"',  # a surrogate encoded as UTF-8 bytes
        b'"\xff"',
        b"[1e400, 123456789012345678901234567890]",  # the stdlib path is strict too
        b'[NaN, "\\ud800"]',
        b'["\xed\xa0\x80", "\\ud800"]',
    ],
)
def test_non_rfc8259_input_is_refused(data: bytes) -> None:
    with pytest.raises(ValueError):
        loads(data)


def test_what_json_allows_is_read_exactly() -> None:
    assert loads(b'"a\\ud800b"') == "a\ud800b"
    assert loads(b"123456789012345678901234567890") == 123456789012345678901234567890
    assert loads(b"1e308") == 1e308
    assert loads(b"[1e-400]") == [0.0]  # underflow is a finite number


def test_nan_and_infinity_are_never_written() -> None:
    for bad in (float("nan"), float("inf"), [1, {"x": float("-inf")}]):
        with pytest.raises(ValueError):
            dumps([bad, "\ud800"])  # the stdlib path
        with pytest.raises(ValueError):
            _dumps_flat(bad, False)
