"""`--truncate-chars N` is a real maximum, as its help says: a one-block result shows at most N characters,
its marker and its recovery notice included (a JSON preview's notice is a block of its own, and counted),
and it is still shrunk with a way back. Through the library door (the pipeline every door shares)."""

from __future__ import annotations

import json

import pytest

from mcpsqueeze import Squeezer

SHAPES = {
    "prose": "word " * 3000,
    "json array": json.dumps([{"id": i, "name": "x" * 20} for i in range(500)]),
    "nested json": json.dumps(
        {"a": {"b": {"c": [{"d": "y" * 50, "e": list(range(40))} for _ in range(50)]}}}
    ),
    "log lines": "\n".join(f"line {i} of the log" for i in range(2000)),
}


@pytest.mark.anyio
@pytest.mark.parametrize("cap", [256, 300, 1000, 2000])
@pytest.mark.parametrize("shape", sorted(SHAPES))
async def test_a_one_block_result_shows_at_most_truncate_chars_notice_included(shape: str, cap: int) -> None:
    squeezer = Squeezer(truncate_chars=cap)
    try:
        shown = await squeezer.present("s", "t", {}, {"content": [{"type": "text", "text": SHAPES[shape]}]})
    finally:
        squeezer.close()
    total = sum(len(block["text"]) for block in shown["content"])
    assert total <= cap, [len(block["text"]) for block in shown["content"]]
    assert shown["_meta"]["truncation"]["response_id"]  # shrunk, with its way back
