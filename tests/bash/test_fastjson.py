"""The shim's JSON on the C accelerator gives what the stdlib's json gives (NaN and Infinity aside)."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mcpsqueeze.bash._fastjson import dumps, loads

scalars = (
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text()
)
values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=20,
)


@given(values, st.booleans())
def test_dumps_is_json_dumps(value: object, ensure_ascii: bool) -> None:
    assert dumps(value, ensure_ascii=ensure_ascii) == json.dumps(value, ensure_ascii=ensure_ascii)


@given(values, st.sampled_from(["", " ", "\n\t \r"]))
def test_loads_reads_what_json_writes_with_surrounding_whitespace(value: object, pad: str) -> None:
    for text in (json.dumps(value), json.dumps(value, ensure_ascii=False, indent=2)):
        assert loads(pad + text + pad) == json.loads(text)
        assert loads((pad + text).encode()) == json.loads(text)


@pytest.mark.parametrize(
    "text", ["", "  ", "{nope", '{"a": 1} x', "[1, 2", '"\x01"', "1 2", "\ufeff1", "tru"]
)
def test_invalid_documents_fail_with_the_stdlib_message(text: str) -> None:
    with pytest.raises(ValueError) as ours:
        loads(text)
    with pytest.raises(ValueError) as theirs:
        json.loads(text)
    assert str(ours.value) == str(theirs.value)


@pytest.mark.parametrize("text", ["NaN", "[1, Infinity]", '{"x": -Infinity}'])
def test_nan_and_infinity_are_not_json(text: str) -> None:
    with pytest.raises(ValueError, match="not valid JSON"):
        loads(text)


def test_non_finite_floats_are_written_like_json_dumps_unless_refused() -> None:
    assert dumps([math.inf, -math.inf]) == "[Infinity, -Infinity]"
    with pytest.raises(ValueError):
        dumps({"x": [math.nan]}, allow_nan=False)


def test_what_json_cannot_hold_is_refused_and_a_failure_leaves_no_trace() -> None:
    shared = [1]
    with pytest.raises(TypeError, match="Object of type set is not JSON serializable"):
        dumps([shared, {1, 2}])
    loop: list[object] = []
    loop.append(loop)
    with pytest.raises(ValueError, match="Circular reference"):
        dumps(loop)
    assert dumps([shared, shared]) == "[[1], [1]]"
    assert dumps({1: "a", None: "b"}) == json.dumps({1: "a", None: "b"})
