"""The shrink stage in process: the call's own arguments reach the engine's ranking."""

from __future__ import annotations

from typing import Any

import anyio

from mcpsqueeze.pipeline import Call, Outcome
from mcpsqueeze.recovery import MemoryCache, RecoveryStore, recover_result
from mcpsqueeze.stages import ShrinkStage, Workers

WORDS = ("amber", "basil", "cedar", "delta", "ember", "fjord", "grove", "heron", "indigo", "juniper")
PROSE = "".join(
    f"{WORDS[i * 7919 % 10]} {WORDS[i * 104729 % 9]} {WORDS[i * i % 10]} note {i:05d} {WORDS[i * 31 % 7]}\n"
    for i in range(3000)
).replace("note 01500", "note 01500 the needle")


def _present(arguments: dict[str, Any]) -> tuple[str, str]:
    store = RecoveryStore(MemoryCache(), None)
    stage = ShrinkStage(store, Workers(1), 3000, "mcp")
    call = Call(server="docs", tool="search", arguments=arguments, number=1)
    outcome = Outcome()
    presented = anyio.run(stage, call, {"content": [{"type": "text", "text": PROSE}]}, outcome)
    assert outcome.action == "shrink" and outcome.response_id is not None
    original = recover_result(store.load(outcome.response_id), lines="1501")
    return presented["content"][0]["text"], original["content"][0]["text"]


def test_a_line_matching_the_query_argument_is_kept_in_the_preview() -> None:
    preview, line = _present({"query": "needle", "limit": 5})
    assert "needle" in line and line in preview


def test_without_a_matching_argument_the_middle_line_is_cut() -> None:
    preview, line = _present({"query": "nothing-here"})
    assert "needle" in line and line not in preview
