"""The token counter: exact figures, in order, in bounded spans, never a gate, and stopped by `close`."""

from __future__ import annotations

import json
import random
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcpsqueeze.accounting._counter import TokenCounter
from mcpsqueeze.accounting._stats import Accountant, CallRecord
from mcpsqueeze.accounting._tokens import count_tokens, encoding, next_cut, spans


def _whole(text: str) -> int:
    """tiktoken on the text in one piece (what spans must add up to where every cut is exact)."""
    return len(encoding().encode_ordinary(text))


# Letters, digits, marks, quotes, apostrophes (straight and curly), whitespace of every kind, CJK.
_TRICKY = "abcxyzABCXYZ  \n\r\t'\"{}[]:,./\\-_0123456789éüÉ中文’\u0301"


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=_TRICKY, max_size=400), st.integers(min_value=1, max_value=40))
def test_the_spans_of_a_text_count_exactly_as_the_whole_where_every_cut_is_exact(
    text: str, size: int
) -> None:
    parts, start, exact = [], 0, True
    while start < len(text):
        end, at_a_boundary = next_cut(text, start, size)
        exact &= at_a_boundary
        assert 0 < end - start <= size
        parts.append(text[start:end])
        start = end
    assert "".join(parts) == text
    if exact:
        assert sum(_whole(part) for part in parts) == _whole(text)


def test_a_big_json_text_splits_into_many_exact_spans() -> None:
    text = json.dumps([{"name": f"row {i}", "bio": "lorem ipsum " * 5} for i in range(40_000)])
    cuts = list(spans(text))
    assert len(cuts) > 4 and "".join(text[a:b] for a, b in cuts) == text
    assert count_tokens(text) == _whole(text)


def test_the_counter_counts_exactly_what_the_tokenizer_counts() -> None:
    rng = random.Random(7)
    texts = ["", "hello world", "a\ud800b lone surrogate", "big words, " * 200_000]
    texts += ["special <|endoftext|> and <|endofprompt|>" * 3, "<|endoftext|>" * 300_000]  # as ordinary text
    texts += ["".join(rng.choice(_TRICKY) for _ in range(rng.randint(1, 5000))) for _ in range(20)]
    counter = TokenCounter()
    try:
        futures = [counter.count(text) for text in texts]
        assert [f.result(timeout=60) for f in futures] == [count_tokens(t) for t in texts]
        assert counter.drain(timeout=60) and counter.pending_bytes == 0
    finally:
        counter.close()


def test_close_stops_a_long_count_at_once_and_cancels_what_has_no_figure() -> None:
    counter = TokenCounter()
    assert counter.count("warm up").result(timeout=60) == 2
    long = counter.count("many words, " * 5_000_000)  # seconds to count
    waiting = counter.count("after it")
    time.sleep(0.2)
    started = time.perf_counter()
    counter.close()
    assert long.cancelled() and waiting.cancelled()
    assert time.perf_counter() - started < 1.0
    with pytest.raises(RuntimeError, match="closed"):
        counter.count("too late")


def test_a_backlog_over_the_cap_is_sent_at_once_and_counted() -> None:
    counter = TokenCounter(max_pending=1000)
    try:
        counter.busy(+1)  # a call in the pipeline: only a backlog over the cap goes before idle time
        future = counter.count("word " * 1000)
        assert future.result(timeout=60) == count_tokens("word " * 1000)
        counter.busy(-1)
    finally:
        counter.close()


def _record(number: int, before: str, after: str) -> CallRecord:
    action = "passthrough" if before == after else "shrink"
    return CallRecord("tool", number, action, before, after, 0.0)


def test_stats_lines_come_in_call_order_and_the_totals_are_exact(tmp_path: object) -> None:
    from pathlib import Path

    stats = Path(str(tmp_path)) / "stats.jsonl"
    accountant = Accountant(stats)
    big = "lorem ipsum dolor " * 200_000  # counted longer than the small calls after it
    calls = [(big, "short"), ("two words", "two words"), ("three more words", "three more words")]
    for number, (before, after) in enumerate(calls, 1):
        accountant.begin(before)
        accountant.record(_record(number, before, after))
    totals = accountant.close(timeout=120)
    lines = [json.loads(line) for line in stats.read_text().splitlines()]
    assert [line["call"] for line in lines] == [1, 2, 3]
    assert totals.calls == 3
    assert totals.tokens_before == sum(count_tokens(b) for b, _ in calls)
    assert totals.tokens_after == sum(count_tokens(a) for _, a in calls)


def test_a_whitespace_run_tiktoken_could_not_count_whole_is_counted_in_spans() -> None:
    counter = TokenCounter()
    try:
        # tiktoken's regex overflows its backtracking stack on this in one piece; in spans it counts
        failing = counter.count(" " * 1_000_000 + "a")
        after = counter.count("counted after it")
        assert failing.result(timeout=60) == count_tokens(" " * 1_000_000 + "a") > 0
        assert after.result(timeout=60) == count_tokens("counted after it")
        assert counter.count("and later").result(timeout=60) == count_tokens("and later")
        assert counter.drain(timeout=60)
    finally:
        counter.close()
