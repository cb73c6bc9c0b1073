from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mcpsqueeze._errors import RecoveryError
from mcpsqueeze.recovery import resolve_pointer

DOC = {
    "items": [{"name": "a"}, {"name": "b", "tags": ["x", "y"]}],
    "a/b": 1,
    "m~n": 2,
    "": 3,
    "n": None,
    "s": "text",
}


@pytest.mark.parametrize(
    ("pointer", "expected"),
    [
        ("", DOC),
        ("/items/0/name", "a"),
        ("/items/1/tags/1", "y"),
        ("/a~1b", 1),
        ("/m~0n", 2),
        ("/", 3),
        ("/n", None),
    ],
)
def test_a_pointer_selects_the_value_it_names(pointer: str, expected: object) -> None:
    assert resolve_pointer(DOC, pointer) == expected


def test_escapes_are_decoded_tilde_one_before_tilde_zero() -> None:
    assert resolve_pointer({"~1": "tilde-one", "/": "slash"}, "/~01") == "tilde-one"


@pytest.mark.parametrize(
    ("pointer", "message"),
    [
        ("/missing", "no key 'missing' at the root"),
        ("/items/2", "index 2 at /items is out of range; the array has 2 items"),
        ("/items/01", "segment '/items/01' must be an array index"),
        ("/items/-1", "must be an array index"),
        ("/items/x", "must be an array index"),
        ("/items/-", "segment '-' at /items"),
        ("/s/0", "because /s is a str"),
        ("/n/x", "because /n is a null"),
        ("/a~2b", "'~' not followed by 0 or 1"),
        ("/m~", "'~' not followed by 0 or 1"),
        ("/items/0/name/x", "segment '/items/0/name/x'"),
    ],
)
def test_a_bad_pointer_names_the_failing_segment(pointer: str, message: str) -> None:
    with pytest.raises(RecoveryError) as info:
        resolve_pointer(DOC, pointer)
    assert message in str(info.value)
    assert repr(pointer) in str(info.value)


def test_a_pointer_without_its_leading_slash_is_refused_by_the_request() -> None:
    from mcpsqueeze._errors import UsageError
    from mcpsqueeze.core._request import RecoverRequest

    with pytest.raises(UsageError, match="must be empty"):
        RecoverRequest.parse({"response_id": "ab" * 16, "pointer": "items"})


def test_resolving_does_not_change_the_document() -> None:
    before = json.dumps(DOC, sort_keys=True)
    resolve_pointer(DOC, "/items/1/tags")
    assert json.dumps(DOC, sort_keys=True) == before


def _escape(token: str) -> str:
    return token.replace("~", "~0").replace("/", "~1")


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner, max_size=4),
    max_leaves=20,
)


def _paths(value: object, prefix: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], object]]:
    found: list[tuple[tuple[str, ...], object]] = [(prefix, value)]
    if isinstance(value, dict):
        for key, child in value.items():
            found += _paths(child, (*prefix, key))
    elif isinstance(value, list):
        for index, child in enumerate(value):
            found += _paths(child, (*prefix, str(index)))
    return found


@given(json_values)
def test_every_location_in_any_document_is_reachable_by_its_escaped_pointer(document: object) -> None:
    for path, value in _paths(document):
        pointer = "".join("/" + _escape(token) for token in path)
        assert resolve_pointer(document, pointer) == value
