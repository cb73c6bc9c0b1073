"""The shrink stage in process: the call's own arguments reach the engine's ranking."""

from __future__ import annotations

import json
import threading
from typing import Any

import anyio
import pytest

from mcpsqueeze.core import RecoverRequest, _stages, answer
from mcpsqueeze.core._pipeline import Call, Outcome
from mcpsqueeze.core._stages import ShrinkStage, Workers, shrink_fitting
from mcpsqueeze.recovery import MemoryCache, RecoveryStore
from mcpsqueeze.settings import Policy


def recover_result(original: bytes, **arguments: Any) -> dict[str, Any]:
    """The core's answer for `arguments` from stored original bytes (as every door gets it)."""
    return answer([json.loads(original)], RecoverRequest.parse({"response_id": "0" * 32, **arguments}))


WORDS = ("amber", "basil", "cedar", "delta", "ember", "fjord", "grove", "heron", "indigo", "juniper")
PROSE = "".join(
    f"{WORDS[i * 7919 % 10]} {WORDS[i * 104729 % 9]} {WORDS[i * i % 10]} note {i:05d} {WORDS[i * 31 % 7]}\n"
    for i in range(3000)
).replace("note 01510", "note 01510 needle")  # one word of its own: it does not stand out


def _present(arguments: dict[str, Any]) -> tuple[str, str]:
    store = RecoveryStore(MemoryCache(), None)
    stage = ShrinkStage(store, Workers(1))
    call = Call(server="docs", tool="search", arguments=arguments, number=1, policy=Policy(budget=3000))
    outcome = Outcome()
    presented = anyio.run(stage, call, {"content": [{"type": "text", "text": PROSE}]}, outcome)
    assert outcome.action == "shrink" and outcome.response_id is not None
    original = recover_result(store.get(outcome.response_id), lines="1511")
    return presented["content"][0]["text"], original["content"][0]["text"]


def test_a_line_matching_the_query_argument_is_kept_in_the_preview() -> None:
    preview, line = _present({"query": "needle", "limit": 5})
    assert "needle" in line and line in preview


def test_without_a_matching_argument_the_middle_line_is_cut() -> None:
    preview, line = _present({"query": "nothing-here"})
    assert "needle" in line and line not in preview


def test_a_lone_shrink_runs_on_the_event_loop_but_one_beside_a_shrink_in_a_worker_goes_to_a_worker(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    threads: dict[int, str] = {}
    big_started = threading.Event()
    release = threading.Event()

    def recording(job: Any) -> Any:
        threads[len(job.texts[0])] = threading.current_thread().name
        if len(job.texts[0]) > 400_000:  # the big one waits in its worker until the second has run
            big_started.set()
            release.wait(10)
        return shrink_fitting(job)

    monkeypatch.setattr(_stages, "shrink_fitting", recording)
    stage = ShrinkStage(RecoveryStore(MemoryCache(), None), Workers(2))
    policy = Policy(budget=3000)
    big, mid = PROSE * 4, PROSE[:100_000]  # ~480 K and 100 K characters

    async def main() -> None:
        await stage(Call(server="d", tool="t", arguments={}, number=1, policy=policy), _text(mid), Outcome())
        assert threads.pop(len(mid)) == threading.current_thread().name  # alone: on the event loop
        async with anyio.create_task_group() as tg:
            tg.start_soon(
                stage,
                Call(server="d", tool="t", arguments={}, number=2, policy=policy),
                _text(big),
                Outcome(),
            )
            with anyio.fail_after(10):
                while not big_started.is_set():
                    await anyio.sleep(0.01)
            await stage(
                Call(server="d", tool="t", arguments={}, number=3, policy=policy), _text(mid), Outcome()
            )
            release.set()
        assert threads[len(big)] != threading.current_thread().name
        assert threads[len(mid)] != threading.current_thread().name  # beside a shrink: in a worker

    anyio.run(main)


def _text(text: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": text}]}
