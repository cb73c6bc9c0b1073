"""Issue 23 item 34: the numbers agree. The text summary names what "passed through" counts as --json
names it, and a dedup pointer's estimate (counting not done yet) is near the o200k count the stats
record, not characters / 4."""

from __future__ import annotations

import concurrent.futures
import json
from pathlib import Path

import pytest

from mcpsqueeze._results import text_of
from mcpsqueeze._voice import McpVoice
from mcpsqueeze.accounting._stats import Totals, render_summary
from mcpsqueeze.accounting._tokens import count_tokens
from mcpsqueeze.core._pipeline import Call, Outcome
from mcpsqueeze.core._stages import DedupStage, Workers
from mcpsqueeze.recovery import FileStore, RecoveryStore


def test_23_34_passed_through_names_its_passthrough_and_errors_as_json_does() -> None:
    totals = Totals()
    for action in ["passthrough"] * 5 + ["error"] * 3:
        totals.add(action, 1, 1)
    assert "passed through   8 (passthrough 5, errors 3)\n" in render_summary(totals) + "\n"
    plain = Totals()
    plain.add("passthrough", 1, 1)
    assert "passed through   1\n" in render_summary(plain) + "\n"


def _result(n: int) -> dict[str, object]:
    rows = [{"id": i, "title": f"row {i} of the table", "n": i * 7} for i in range(n)]
    return {"content": [{"type": "text", "text": json.dumps(rows)}], "isError": False}


@pytest.mark.anyio
async def test_23_34_a_pointer_estimate_is_near_the_o200k_count(tmp_path: Path) -> None:
    futures: dict[str, concurrent.futures.Future[int]] = {}

    def count(text: str) -> concurrent.futures.Future[int]:
        future: concurrent.futures.Future[int] = concurrent.futures.Future()
        futures[text] = future
        return future

    stage = DedupStage(RecoveryStore(None, FileStore(tmp_path / "rec")), Workers(1), count, McpVoice())
    small, big = _result(200), _result(3000)
    await stage(Call("s", "list", {}, 1), small, Outcome())
    futures[text_of(small)].set_result(count_tokens(text_of(small)))  # the session has measured one
    await stage(Call("s", "list", {}, 2), big, Outcome())  # this one's count is not done
    presented = await stage(Call("s", "list", {}, 3), _result(3000), Outcome())
    text = presented["content"][0]["text"]  # type: ignore[index]
    estimate = int(text.split("~", 1)[1].split(" ", 1)[0])
    actual = count_tokens(text_of(big))
    assert abs(estimate - actual) / actual < 0.1, (estimate, actual, len(text_of(big)) // 4)
