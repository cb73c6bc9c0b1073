"""The dedup stage's pointer states the same token figure the stats line records for that call."""

from __future__ import annotations

import concurrent.futures
import json
from pathlib import Path

import anyio
import pytest

from mcpsqueeze._voice import ShellVoice
from mcpsqueeze.accounting._tokens import count_tokens
from mcpsqueeze.core._pipeline import Call, Outcome
from mcpsqueeze.core._stages import DedupStage, Workers
from mcpsqueeze.recovery import FileStore, RecoveryStore


def _result() -> dict[str, object]:
    rows = [{"id": i, "title": f"row {i} of the table", "n": i * 7} for i in range(3000)]
    return {"content": [{"type": "text", "text": json.dumps(rows)}], "isError": False}


def _store(tmp_path: Path) -> RecoveryStore:
    return RecoveryStore(None, FileStore(tmp_path / "rec"))


@pytest.mark.anyio
async def test_a_repeat_that_arrives_before_counting_ends_does_not_wait_and_states_its_characters(
    tmp_path: Path,
) -> None:
    pending: concurrent.futures.Future[int] = concurrent.futures.Future()
    stage = DedupStage(_store(tmp_path), Workers(1), lambda text: pending)
    await stage(Call("s", "list", {}, 1), _result(), Outcome())
    # Counting finishes only after the repeat was answered (a busy accountant): a stage that waited for
    # the count would never answer, and fail_after says so.
    outcome = Outcome()
    try:
        with anyio.fail_after(30):
            presented = await stage(Call("s", "list", {}, 2), _result(), outcome)
    finally:
        pending.set_result(108_121 + 7_185)
    text = presented["content"][0]["text"]  # type: ignore[index]
    assert outcome.action == "dedup"
    from mcpsqueeze._results import text_of

    assert "115306" not in text and "~" not in text
    assert f"call #1 (list), {len(text_of(_result()))} characters not resent" in text


@pytest.mark.anyio
async def test_the_pointer_figure_equals_the_tokens_accounting_counts(tmp_path: Path) -> None:
    from mcpsqueeze._results import text_of

    count_tokens("warm up")  # the first count loads the vocabulary (seconds on a busy machine)
    pool = concurrent.futures.ThreadPoolExecutor(1)
    futures: list[concurrent.futures.Future[int]] = []

    def count(text: str) -> concurrent.futures.Future[int]:
        futures.append(pool.submit(count_tokens, text))
        return futures[-1]

    stage = DedupStage(_store(tmp_path), Workers(1), count)
    result = _result()
    await stage(Call("s", "list", {}, 1, voice=ShellVoice()), result, Outcome())
    concurrent.futures.wait(futures)  # counted at idle time, before the repeat arrives
    presented = await stage(Call("s", "list", {}, 2, voice=ShellVoice()), _result(), Outcome())
    expected = count_tokens(text_of(result))  # what the stats line records as tokens_before
    assert f"call #1 (list), {expected} tokens not resent" in presented["content"][0]["text"]  # type: ignore[index]
    pool.shutdown()
