"""A JSON object with one key longer than the budget (no copy of it fits, however much of its value is
left out) is shrunk as text is: head and tail with a marker naming the recovery, and a truncation
record, never passed whole. The engine, `Squeezer`, and wrap over stdio."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest

from mcpsqueeze import Squeezer
from mcpsqueeze._voice import McpVoice
from mcpsqueeze.shrink import RecoveryHint, shrink_texts
from memwrap import MemoryWrap

pytestmark = pytest.mark.fuzz


def _document(key_chars: int, items: int) -> dict[str, Any]:
    return {"k" * key_chars: [{"i": i, "w": "word " * 5} for i in range(items)]}


@pytest.mark.parametrize(("budget", "key_chars"), [(4000, 4000), (20_000, 25_000), (2000, 1990)])
def test_a_json_object_whose_key_is_longer_than_the_budget_is_shrunk_as_text(
    budget: int, key_chars: int
) -> None:
    text = json.dumps(_document(key_chars, 2000))
    shrunk = shrink_texts([text], budget, RecoveryHint("0" * 32, None, McpVoice()))
    assert shrunk is not None and sum(map(len, shrunk.texts)) + len(shrunk.notice or "") <= budget
    assert shrunk.truncation["response_id"] == "0" * 32 and shrunk.report.pruned
    assert "squeeze_recover" in shrunk.texts[0] and '{"kkk' in shrunk.texts[0][:2000]


def test_squeezer_shrinks_a_4000_character_key_at_a_4000_character_budget() -> None:
    squeezer = Squeezer(budget=4000)
    text = json.dumps(_document(4000, 50))
    presented = anyio.run(squeezer.present, "s", "t", {}, {"content": [{"type": "text", "text": text}]})
    rid = presented["_meta"]["truncation"]["response_id"]
    assert len(presented["content"][0]["text"]) <= 4000
    assert squeezer.recover(rid) == text  # whole again, byte for byte
    squeezer.close()


def test_wrap_shrinks_a_2_mb_object_under_a_25000_character_key(tmp_path: Path) -> None:
    text = json.dumps(_document(25_000, 20_000))
    with MemoryWrap(["--recovery-dir", str(tmp_path / "rec")]) as client:
        client.initialize()
        presented = client.call("echo", {"text": text}, timeout=60)
        rid = presented["_meta"]["truncation"]["response_id"]
        whole = client.call("squeeze_recover", {"response_id": rid, "page": 0})
        assert client.close() == 0
    shown = "".join(block["text"] for block in presented["content"])
    assert len(shown) <= 20_000 and rid in shown
    assert whole["_meta"]["mcpsqueeze/page"]["total_chars"] == len(text)
