"""A dedup pointer states one number, the one the stats record: the o200k tokens of the repeated result
once counting has reached its first sight (that call's `tokens_before` in the stats file), else its exact
characters (that call's `chars_before`). Never an estimate. Through a real pipeline, accountant and stats
file."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from mcpsqueeze.accounting import Accountant
from mcpsqueeze.core._pipeline import Call, Pipeline
from mcpsqueeze.core._stages import DedupStage, Workers
from mcpsqueeze.recovery import FileStore, RecoveryStore

pytestmark = pytest.mark.fuzz

FIGURE = re.compile(r"call #1 \(list\), (\d+) (tokens|characters) not resent\.")


def _result() -> dict[str, Any]:
    rows = [{"id": i, "title": f"row {i} of the table", "n": i * 7} for i in range(3000)]
    return {"content": [{"type": "text", "text": json.dumps(rows)}], "isError": False}


def _pipeline(tmp_path: Path) -> tuple[Pipeline, Accountant]:
    accountant = Accountant(tmp_path / "stats.jsonl")
    store = RecoveryStore(None, FileStore(tmp_path / "rec"))
    return Pipeline([DedupStage(store, Workers(1), accountant.count)], accountant), accountant


def _rows(tmp_path: Path) -> dict[int, dict[str, Any]]:
    return {row["call"]: row for row in map(json.loads, (tmp_path / "stats.jsonl").read_text().splitlines())}


@pytest.mark.anyio
async def test_a_counted_repeat_states_the_tokens_the_stats_record_for_that_call(tmp_path: Path) -> None:
    pipeline, accountant = _pipeline(tmp_path)
    await pipeline.present(Call("s", "list", {}, 1), _result())
    assert accountant._counter.drain(60)  # counted at idle time, before the repeat arrives
    presented, outcome = await pipeline.present(Call("s", "list", {}, 2), _result())
    accountant.close()
    assert outcome.action == "dedup"
    figure = FIGURE.search(presented["content"][0]["text"])
    assert figure is not None and figure.group(2) == "tokens", presented
    assert int(figure.group(1)) == _rows(tmp_path)[2]["tokens_before"] == _rows(tmp_path)[1]["tokens_before"]


@pytest.mark.anyio
async def test_a_repeat_before_counting_states_its_exact_characters_never_an_estimate(tmp_path: Path) -> None:
    pipeline, accountant = _pipeline(tmp_path)
    accountant.busy(+1)  # calls keep coming: counting waits for idle time
    await pipeline.present(Call("s", "list", {}, 1), _result())
    presented, _ = await pipeline.present(Call("s", "list", {}, 2), _result())
    accountant.busy(-1)
    accountant.close()
    text = presented["content"][0]["text"]
    figure = FIGURE.search(text)
    assert figure is not None and figure.group(2) == "characters" and "~" not in text, text
    assert int(figure.group(1)) == _rows(tmp_path)[2]["chars_before"]
