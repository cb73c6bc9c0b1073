"""Issue 23 item 1: one recover request, parsed and bounded once (core/_request.py), evaluated with a
bounded cost. Every hostile argument is a UsageError that names its bound: never ValueError,
RecursionError or MemoryError, and never more than a few seconds or a few hundred MB."""

from __future__ import annotations

import dataclasses
import json
import resource
import time

import pytest
from recover_hostile import HOSTILE, ORIGINAL_DOC

from mcpsqueeze import UsageError
from mcpsqueeze.core import RecoverRequest, recover
from mcpsqueeze.recovery import MemoryCache, RecoveryStore, new_response_id


@pytest.fixture
def stored() -> tuple[RecoveryStore, str]:
    store = RecoveryStore(MemoryCache(), None)
    rid = new_response_id()
    original = {"content": [{"type": "text", "text": json.dumps(ORIGINAL_DOC)}], "isError": False}
    store.put(rid, json.dumps(original).encode())
    return store, rid


@pytest.mark.parametrize(("case", "arguments", "bound"), HOSTILE, ids=[c[0] for c in HOSTILE])
def test_23_1_a_hostile_argument_is_a_usage_error_naming_its_bound(
    stored: tuple[RecoveryStore, str], case: str, arguments: dict[str, object], bound: str
) -> None:
    store, rid = stored
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    started = time.monotonic()
    with pytest.raises(UsageError, match=bound):
        recover(store, RecoverRequest.parse({"response_id": rid, **arguments}))
    assert time.monotonic() - started < 5
    grown_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
    assert grown_kb < 400_000, f"{case} grew the peak RSS by {grown_kb} KB"


def test_23_1_parse_refuses_what_is_not_an_object_or_has_unknown_keys() -> None:
    with pytest.raises(UsageError, match="object"):
        RecoverRequest.parse(["a"])
    with pytest.raises(UsageError, match="32 hex"):
        RecoverRequest.parse({"response_id": "zz"})
    with pytest.raises(UsageError, match="unknown argument 'pointr'"):
        RecoverRequest.parse({"response_id": "a" * 32, "pointr": "/a"})
    with pytest.raises(UsageError, match="not both"):
        RecoverRequest.parse({"response_id": "a" * 32, "lines": "1-2", "offset": 3})


def test_23_1_a_request_is_a_frozen_value_and_keeps_what_was_asked(stored: tuple[RecoveryStore, str]) -> None:
    store, rid = stored
    request = RecoverRequest.parse({"response_id": rid, "pointer": "/items/3", "query": "n"})
    with pytest.raises(dataclasses.FrozenInstanceError):
        request.query = "x"  # type: ignore[misc]
    assert request == RecoverRequest.parse({"response_id": rid, "pointer": "/items/3", "query": "n"})
    assert recover(store, request)["content"][0]["text"] == "3"
    window = recover(store, RecoverRequest.parse({"response_id": rid, "offset": "2", "length": 5}))
    assert window["content"][0]["text"] == json.dumps(ORIGINAL_DOC)[2:7]


def test_23_1_legitimate_queries_on_a_large_original_still_run(stored: tuple[RecoveryStore, str]) -> None:
    store, rid = stored
    keys = recover(store, RecoverRequest.parse({"response_id": rid, "query": "items[].n | sort(@)"}))
    assert json.loads(keys["content"][0]["text"]) == list(range(300))
    both = recover(store, RecoverRequest.parse({"response_id": rid, "query": "[items[0].n, items[1].n]"}))
    assert json.loads(both["content"][0]["text"]) == [0, 1]
