"""The pipeline and each result stage driven directly (no subprocess): a real store in memory and files."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import anyio
import pytest

from mcpsqueeze._jsonbytes import dumps, loads
from mcpsqueeze._voice import McpVoice
from mcpsqueeze.accounting import Accountant
from mcpsqueeze.core import RecoverRequest, _stages, recover
from mcpsqueeze.core._pipeline import Call, Outcome, Pipeline
from mcpsqueeze.core._stages import DedupStage, ShrinkStage, Workers
from mcpsqueeze.recovery import FileStore, MemoryCache, RecoveryStore, open_recovery_file
from mcpsqueeze.recovery._ids import alias_target
from mcpsqueeze.settings import Policy

pytestmark = pytest.mark.anyio

BUDGET = 4000


def big_result(n: int = 400) -> dict[str, Any]:
    rows = [{"id": i, "title": f"issue {i}", "body": "lorem ipsum " * 8} for i in range(n)]
    return {"content": [{"type": "text", "text": json.dumps({"issues": rows})}], "isError": False}


@pytest.fixture
def store(tmp_path: Path) -> RecoveryStore:
    return RecoveryStore(MemoryCache(), FileStore(tmp_path / "recovery"))


def pipeline(store: RecoveryStore, *, dedup: bool = True, shrink: bool = True) -> Pipeline:
    workers = Workers(2)
    stages: list[Any] = []
    if dedup:
        stages.append(DedupStage(store, workers, None))
    if shrink:
        stages.append(ShrinkStage(store, workers))
    return Pipeline(stages, policy_for=budget)


def budget(server: str, tool: str) -> Policy:
    return Policy(budget=BUDGET)


def call(number: int, tool: str = "search", full: bool = False) -> Call:
    return Call(server="s", tool=tool, arguments={}, number=number, full=full)


def text(result: dict[str, Any]) -> str:
    return "".join(b["text"] for b in result["content"] if b.get("type") == "text")


async def test_a_small_result_passes_through_as_the_same_object(store: RecoveryStore) -> None:
    result = {"content": [{"type": "text", "text": "hello"}]}
    presented, outcome = await pipeline(store).present(call(1), result)
    assert presented is result
    assert outcome.action == "passthrough"


async def test_a_large_result_is_shrunk_within_budget_and_its_original_stored_first(
    store: RecoveryStore,
) -> None:
    result = big_result()
    presented, outcome = await pipeline(store).present(call(1), result)
    assert outcome.action == "shrink"
    assert len(text(presented)) <= BUDGET
    record = presented["_meta"]["truncation"]
    assert record["response_id"] == outcome.response_id
    assert Path(record["original_response_file"]).read_bytes() == dumps(result)
    assert (
        recover(store, RecoverRequest.parse({"response_id": outcome.response_id}))["content"]
        == result["content"]
    )


async def test_an_error_result_and_a_full_call_are_never_changed(store: RecoveryStore) -> None:
    error = {**big_result(), "isError": True}
    presented, outcome = await pipeline(store).present(call(1), error)
    assert presented is error and outcome.action == "error"
    result = big_result()
    presented, outcome = await pipeline(store).present(call(2, full=True), result)
    assert presented is result and outcome.action == "full"


async def test_a_failing_stage_costs_nothing_the_result_passes_unchanged(store: RecoveryStore) -> None:
    async def broken(call: Call, result: dict[str, Any], outcome: Outcome) -> dict[str, Any]:
        raise RuntimeError("a bug")

    result = big_result()
    presented, outcome = await Pipeline([broken]).present(call(1), result)
    assert presented is result and outcome.action == "passthrough"


async def test_a_repeat_becomes_a_pointer_whose_meta_truncation_names_id_and_file(
    store: RecoveryStore,
) -> None:
    steps = pipeline(store, shrink=False)
    await steps.present(call(1), big_result(50))
    presented, outcome = await steps.present(call(2), big_result(50))
    assert outcome.action == "dedup" and presented["_meta"]["mcpsqueeze/dedup"]["same_as_call"] == 1
    record = presented["_meta"]["truncation"]
    assert record["response_id"] == outcome.response_id
    assert record["message"] == text(presented)
    assert "call #1 (search)" in record["message"] and outcome.response_id in record["message"]
    assert record["original_response_file"] == outcome.original_file
    # the shim's own fields stay where it reads them
    assert presented["_meta"]["mcpsqueeze/dedup"] == {
        "same_as_call": 1,
        "tool": "search",
        "response_id": outcome.response_id,
        "original_response_file": outcome.original_file,
    }
    assert json.loads(loads(store.get(outcome.response_id))["content"][0]["text"]) == json.loads(
        big_result(50)["content"][0]["text"]
    )


async def test_every_repeat_of_a_result_shares_one_stored_original(store: RecoveryStore) -> None:
    steps = pipeline(store, shrink=False)
    await steps.present(call(1), big_result(50))
    ids, files = [], set()
    for number in (2, 3, 4):
        _, outcome = await steps.present(call(number), big_result(50))
        ids.append(outcome.response_id or "")
        files.add(outcome.original_file)
    assert store.files is not None and store.memory is not None
    assert len(files) == 1 and None not in files  # every pointer names the one file holding the bytes
    assert store.memory.total_bytes == len(dumps(big_result(50)))
    full = [p for p in store.files.directory.iterdir() if alias_target(p.read_bytes()) is None]
    assert len(full) == 1  # one complete original on disk; the other ids are alias records
    for rid in ids:
        assert store.get(rid) == dumps(big_result(50))
        assert store.files.get(rid) == dumps(big_result(50))
        assert open_recovery_file(store.files.directory, rid) == dumps(big_result(50))


async def test_a_pointer_is_not_used_when_it_would_be_longer_than_the_content(store: RecoveryStore) -> None:
    steps = pipeline(store, shrink=False)
    small = {"content": [{"type": "text", "text": "ok"}]}
    await steps.present(call(1), small)
    presented, outcome = await steps.present(call(2), {"content": [{"type": "text", "text": "ok"}]})
    assert outcome.action == "passthrough" and text(presented) == "ok"


async def test_shrink_skips_a_result_that_dedup_replaced(store: RecoveryStore) -> None:
    steps = pipeline(store)
    await steps.present(call(1), big_result())
    presented, outcome = await steps.present(call(2), big_result())
    assert outcome.action == "dedup"
    assert presented["content"][0]["text"].startswith("[mcpsqueeze] identical to the result of call #1")


async def test_when_no_store_takes_the_original_the_result_is_not_shrunk(tmp_path: Path) -> None:
    store = RecoveryStore(MemoryCache(max_bytes=10), None)
    result = big_result()
    presented, outcome = await pipeline(store).present(call(1), result)
    assert presented is result
    assert outcome.store_failed and "memory cache limit" in outcome.store_failed


async def test_a_result_too_big_for_the_only_store_is_not_condensed_before_it_passes_unshrunk(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    store = RecoveryStore(MemoryCache(max_bytes=1000), None)

    def no_condensing(*_: Any) -> None:
        raise AssertionError("the engine ran for a result whose original no store can take")

    monkeypatch.setattr(_stages, "shrink_fitting", no_condensing)
    result = big_result()
    presented, outcome = await pipeline(store, dedup=False).present(call(1), result)
    assert presented is result
    assert outcome.store_failed and "memory cache limit" in outcome.store_failed


def test_only_a_memory_only_store_knows_in_advance_that_it_cannot_hold_an_original(tmp_path: Path) -> None:
    assert RecoveryStore(MemoryCache(max_bytes=10), None).cannot_hold(11)
    assert RecoveryStore(MemoryCache(max_bytes=10), None).cannot_hold(10) is None
    assert RecoveryStore(MemoryCache(max_bytes=10), FileStore(tmp_path / "rec")).cannot_hold(10**9) is None


async def test_a_suffixed_recover_tool_is_what_the_hints_name(store: RecoveryStore) -> None:
    workers = Workers(1)
    steps = Pipeline(
        [DedupStage(store, workers, None), ShrinkStage(store, workers)],
        policy_for=budget,
        voice=McpVoice("squeeze_recover_2"),
    )
    presented, _ = await steps.present(call(1), big_result())
    assert 'squeeze_recover_2 {"response_id"' in presented["_meta"]["truncation"]["message"]
    presented, _ = await steps.present(call(2), big_result())
    assert "call squeeze_recover_2 with" in text(presented)


def test_an_alias_file_is_only_readable_through_its_target(store: RecoveryStore) -> None:
    assert store.files is not None
    original = b'{"content":[{"type":"text","text":"x"}]}'
    first, second = "a" * 32, "b" * 32
    store.files.put(first, original)
    assert store.files.alias(second, first) == str(store.files.path_for(first))
    assert store.files.get(second) == original
    os.unlink(store.files.path_for(first))
    with pytest.raises(Exception, match="no recovery file"):
        store.files.get(second)


async def test_without_dedup_a_repeat_is_shrunk_again_and_its_record_names_the_one_stored_file(
    store: RecoveryStore,
) -> None:
    steps = pipeline(store, dedup=False)
    first, one = await steps.present(call(1), big_result())
    again, two = await steps.present(call(2), big_result())
    assert one.response_id != two.response_id
    file = first["_meta"]["truncation"]["original_response_file"]
    assert again["_meta"]["truncation"]["original_response_file"] == file
    assert file in again["_meta"]["truncation"]["message"]
    assert (
        recover(store, RecoverRequest.parse({"response_id": two.response_id}))["content"]
        == big_result()["content"]
    )


async def test_a_call_cancelled_in_its_stages_leaves_no_text_held_for_its_count() -> None:
    class Stuck:
        async def __call__(self, call: Call, result: Any, outcome: Outcome) -> Any:
            await anyio.sleep_forever()

    accountant = Accountant()
    steps = Pipeline([Stuck()], accountant)
    with anyio.move_on_after(0.2):
        await steps.present(Call("s", "t", {}, 1), big_result())
    assert not accountant._in_flight
    accountant.close()
