"""`ToonStage` directly, with a real recovery store and worker pool (no subprocess)."""

from __future__ import annotations

import json

import pytest
import toon_format

from mcpsqueeze._jsonbytes import dumps
from mcpsqueeze.core._pipeline import Call, Outcome
from mcpsqueeze.core._stages import ToonStage, Workers
from mcpsqueeze.recovery import MemoryCache, RecoveryStore
from mcpsqueeze.settings import Policy

ROWS = [{"id": i, "name": f"row {i}", "ok": i % 2 == 0} for i in range(50)]
RESULT = {
    "content": [
        {"type": "text", "text": json.dumps(ROWS, indent=2)},
        {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"},
        {"type": "text", "text": "A note in prose stays prose."},
    ],
    "structuredContent": {"rows": ROWS},
    "_meta": {"backend/own": 1},
}


def _stage(max_bytes: int = 1 << 20) -> tuple[ToonStage, RecoveryStore]:
    store = RecoveryStore(MemoryCache(300, 32, max_bytes), None)
    return ToonStage(store, Workers(1)), store


def _call() -> Call:
    return Call(server="s", tool="rows", arguments={}, number=1, policy=Policy(toonify=True))


@pytest.mark.anyio
async def test_only_the_json_block_becomes_toon_and_the_stored_original_is_the_result_byte_for_byte() -> None:
    stage, store = _stage()
    outcome = Outcome()
    presented = await stage(_call(), RESULT, outcome)
    texts = [b.get("text") for b in presented["content"]]
    assert toon_format.loads(texts[0]) == ROWS and texts[0].startswith("[50]{id,name,ok}:")
    assert presented["content"][1:] == RESULT["content"][1:]  # the image and the prose as they were
    assert presented["structuredContent"] == RESULT["structuredContent"]
    record = presented["_meta"]["truncation"]
    assert presented["_meta"]["backend/own"] == 1 and record["format"] == "toon"
    assert (outcome.action, outcome.response_id) == ("toon", record["response_id"])
    assert store.get(record["response_id"]) == dumps(RESULT)


@pytest.mark.anyio
async def test_a_result_whose_original_cannot_be_stored_passes_unchanged_and_says_why() -> None:
    stage, _store = _stage(max_bytes=64)
    outcome = Outcome()
    presented = await stage(_call(), RESULT, outcome)
    assert presented is RESULT and outcome.action == "passthrough"
    assert outcome.store_failed and "memory cache limit" in outcome.store_failed


@pytest.mark.anyio
@pytest.mark.parametrize("action", ["shrink", "dedup"])
async def test_a_shrunk_or_deduplicated_result_is_never_toonified(action: str) -> None:
    stage, _store = _stage()
    outcome = Outcome(action=action)
    assert await stage(_call(), RESULT, outcome) is RESULT
