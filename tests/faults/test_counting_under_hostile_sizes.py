"""Token counting under hostile sizes: a 50 MB and a 100 MB one-letter result through a spawned `wrap` keep
its process tree (the proxy and the backend) within 300 MB above its idle RSS, the next small call answers
within 50 ms (counting never holds a call up) and the summary is exact; a count that cannot be made is
named, never silently left out; an exit while it still counts says so, then gives the exact figures; and
the backend does not outlive a SIGKILLed wrap by 2 s.

One session serves the memory assertions (a run costs ~20-40 s of a busy machine). The sampler kills the
tree when it crosses the bound by far, so a regression fails fast instead of eating the machine."""

from __future__ import annotations

import contextlib
import json
import logging
import os
import random
import re
import signal
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from treemem import PeakSampler, descendants, tree_rss

import mcpsqueeze.accounting._tokens as tokens_module
from mcpsqueeze.accounting import Accountant, CallRecord
from mcpsqueeze.accounting._report import load_report, render_text
from mcpsqueeze.accounting._stats import render_summary
from mcpsqueeze.accounting._tokens import SPAN, count_tokens, spans
from rawclient import RawClient, cli, wait_for

BACKEND = Path(__file__).parents[1] / "fixtures" / "big_backend.py"
MB = 1 << 20
BOUND = 300 * 1000 * 1000  # bytes above idle
SIZES = (50, 100)  # MiB of one letter
TOKENS_PER_A = 1 / 8  # o200k: a run of "a" is tokens of eight letters ("aaaaaaaa"), exactly


@dataclass
class Run:
    idle: int = 0
    peak: int = 0
    killed: bool = False
    tiny_ms: list[float] = field(default_factory=list)
    stats: list[dict[str, object]] = field(default_factory=list)
    stderr: str = ""
    code: int | None = None


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Run:
    tmp = tmp_path_factory.mktemp("memory")
    stats = tmp / "stats.jsonl"
    argv = cli(
        "wrap", "--recovery-dir", str(tmp / "rec"), "--stats-file", str(stats),
        "--", sys.executable, str(BACKEND),
    )  # fmt: skip
    out = Run()
    with RawClient(argv) as client:
        client.initialize()
        client.call("tiny")
        client.call("letters", {"mb": 0.05})  # the counter loads its vocabulary
        wait_for(lambda: stats.exists() and len(stats.read_text().splitlines()) >= 2, 60, "two stats lines")
        time.sleep(1.0)  # let the start settle: idle is what the tree holds between calls
        out.idle = tree_rss(client.proc.pid)

        def too_big(rss: int) -> None:  # far past the bound: stop before the machine runs out
            out.killed = True
            for pid in descendants(client.proc.pid):
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)

        with PeakSampler(client.proc.pid, limit=out.idle + 3 * BOUND, over=too_big) as sampler:
            try:
                for mb in SIZES:
                    client.call("letters", {"mb": mb}, timeout=300)
                    started = time.perf_counter()
                    client.call("tiny", timeout=300)
                    out.tiny_ms.append((time.perf_counter() - started) * 1000)
                out.code = client.close(300)
            except (TimeoutError, AssertionError, BrokenPipeError):
                if not out.killed:
                    raise
        out.peak = sampler.peak
        out.stderr = client.stderr
    if stats.exists():
        out.stats = [json.loads(line) for line in stats.read_text().splitlines()]
    return out


def test_a_50_and_a_100_mb_one_letter_result_keep_the_wrap_tree_within_300_mb_of_idle(run: Run) -> None:
    assert not run.killed, f"the tree passed {3 * BOUND / 1e6:.0f} MB above idle and was killed"
    assert run.peak - run.idle <= BOUND, f"peak {run.peak / 1e6:.0f} MB, idle {run.idle / 1e6:.0f} MB"


def test_the_summary_and_stats_lines_are_exact(run: Run) -> None:
    assert run.code == 0, run.stderr
    big = [line for line in run.stats if int(str(line["chars_before"])) >= 50 * MB]
    assert [line["tokens_before"] for line in big] == [int(mb * MB * TOKENS_PER_A) for mb in SIZES]
    total = sum(int(str(line["tokens_before"])) for line in run.stats)
    summary = re.search(r"tokens before\s+(\d+)", run.stderr)
    assert summary is not None and int(summary.group(1)) == total, run.stderr[-2000:]
    assert "partial" not in run.stderr


def test_the_next_tiny_call_after_a_huge_result_answers_within_50_ms(run: Run) -> None:
    assert len(run.tiny_ms) == len(SIZES) and max(run.tiny_ms) < 50, run.tiny_ms


def test_texts_are_counted_in_bounded_spans_cut_at_the_same_places_every_time() -> None:
    text = "a" * (3 * SPAN + 5) + " ordinary words, then more " * 2000 + "中" * (2 * SPAN)
    cuts = list(spans(text))
    assert cuts == list(spans(text)) and cuts[0] == (0, SPAN)
    assert all(end - start <= SPAN for start, end in cuts)
    assert "".join(text[a:b] for a, b in cuts) == text
    assert count_tokens("a" * (12 * SPAN)) == 12 * SPAN // 8


def test_ordinary_text_counts_exactly_as_one_piece_of_tiktoken() -> None:
    from mcpsqueeze.accounting._tokens import encoding

    text = json.dumps(
        [{"name": f"row {i}", "bio": "Lorem IPSUM 12345 dolor, sit-amet. " * 3} for i in range(3000)]
    )
    assert count_tokens(text) == len(encoding().encode_ordinary(text))


# -- a count that cannot be made


def _record(accountant: Accountant, number: int, text: str) -> None:
    accountant.record(CallRecord(tool="t", number=number, action="shrink", before_text=text,
                                 after_text=text[:100], added_latency_ms=1.0, session="s"))  # fmt: skip


class _OutOfMemory:
    """tiktoken at the end of the process's memory: a span of more than 1,000 characters fails."""

    def __init__(self, encoding: Any) -> None:
        self.encoding = encoding

    def encode_ordinary(self, text: str) -> list[int]:
        if len(text) > 1000:
            raise MemoryError
        return list(self.encoding.encode_ordinary(text))


def test_a_count_that_cannot_be_made_is_reported_missing_never_left_out(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out_of_memory = _OutOfMemory(tokens_module.encoding())
    monkeypatch.setattr(tokens_module, "encoding", lambda: out_of_memory)
    stats = tmp_path / "stats.jsonl"
    accountant = Accountant(stats)
    _record(accountant, 1, "alpha beta gamma " * 4000)
    _record(accountant, 2, "small")
    totals = accountant.close()
    assert (totals.calls, totals.uncounted) == (2, 1)
    summary = render_summary(totals)
    assert re.search(r"^  calls proxied    2$", summary, re.M), summary
    assert re.search(r"^  not counted      1 call\b.*token figures", summary, re.M), summary
    rows = [json.loads(line) for line in stats.read_text().splitlines()]
    assert [row["call"] for row in rows] == [1, 2]
    assert rows[0]["tokens_before"] is None and rows[0]["uncounted"]
    report = render_text(load_report([stats]))
    assert "not counted      1 call" in report and "skipped" not in report, report


# -- an exit while it counts

_WORDS = ["alpha", "beta", "gamma", "delta", "x", "yy", "zeta", "lorem", "ipsum", "42", "Mixed", "tEXT"]


def test_an_exit_while_counting_says_so_then_gives_exact_figures(
    caplog: pytest.LogCaptureFixture,
) -> None:
    # ~40 MB of words, each followed by a separator, both drawn uniformly: seconds to count. Drawn as
    # word-and-separator pairs in one `choices` call (0.6 s of CPU; a `choice` per draw took 4 s).
    pairs = [word + separator for word in _WORDS for separator in " ,.\n"]
    big = "".join(random.Random(3).choices(pairs, k=8_000_000))
    accountant = Accountant()
    accountant.begin(big)
    accountant.record(CallRecord("tool", 1, "shrink", big, "preview", 0.0))
    with caplog.at_level(logging.WARNING, logger="mcpsqueeze.accounting._stats"):
        totals = accountant.close(timeout=300)
    said = [r.getMessage() for r in caplog.records]
    assert any("still counting the tokens of 1 call(s)" in m for m in said), said
    assert not any("partial" in m for m in said), said
    assert totals.tokens_before == count_tokens(big) and totals.tokens_after == count_tokens("preview")


# -- a SIGKILLed wrap leaves no process of ours behind


def _cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except FileNotFoundError:
        return b""


def _alive(pid: int) -> bool:
    """Running or sleeping (a zombie waiting for its reaper is gone already)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(") ", 1)[1][0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state not in "ZX"


def test_the_backend_ends_within_2_s_of_a_wrap_sigkilled_while_it_counts(tmp_path: Path) -> None:
    argv = cli("wrap", "--recovery-dir", str(tmp_path / "rec"), "--", sys.executable, str(BACKEND))
    with RawClient(argv) as client:
        client.initialize()
        client.call("letters", {"mb": 30, "kind": "words"}, timeout=120)  # seconds of counting follow
        ours = descendants(client.proc.pid)
        assert len(ours) >= 2, ours  # wrap, the backend
        os.kill(client.proc.pid, signal.SIGKILL)
        client.proc.wait(10)
        killed = time.monotonic()
        while time.monotonic() - killed < 2.0 and any(_alive(p) for p in ours):
            time.sleep(0.02)
        left = {p: _cmdline(p)[-80:] for p in ours if _alive(p)}
        for pid in left:  # never leave them behind, even when the test fails
            os.kill(pid, signal.SIGKILL)
        assert not left, f"still alive 2 s after wrap was killed: {left}"
