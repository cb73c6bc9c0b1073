"""Issue 23 items 12 and 13: a 50 MB and a 100 MB one-letter result through the real `wrap` keep its
process tree (the proxy, the token counter's helper, the backend) within 300 MB above its idle RSS; the
next small call answers within 50 ms (counting never holds a call up); and the summary is exact.

One session serves every assertion here (a run costs ~20-40 s of a busy machine). The sampler kills the
tree when it crosses the bound by far, so a regression fails fast instead of eating the machine."""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from treemem import PeakSampler, descendants, tree_rss

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
    helper_limits: str = ""


def _helper(pid: int) -> int | None:
    for child in descendants(pid)[1:]:
        try:
            if b"accounting._counter" in Path(f"/proc/{child}/cmdline").read_bytes():
                return child
        except FileNotFoundError:
            pass
    return None


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
        client.call("letters", {"mb": 0.05})  # the helper starts and loads its vocabulary
        helper = wait_for(lambda: _helper(client.proc.pid), 30, "the counter helper to start")
        wait_for(lambda: stats.exists() and len(stats.read_text().splitlines()) >= 2, 60, "two stats lines")
        out.helper_limits = Path(f"/proc/{helper}/limits").read_text()
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


def test_23_12_a_50_and_a_100_mb_one_letter_result_keep_the_wrap_tree_within_300_mb_of_idle(run: Run) -> None:
    assert not run.killed, f"the tree passed {3 * BOUND / 1e6:.0f} MB above idle and was killed"
    assert run.peak - run.idle <= BOUND, f"peak {run.peak / 1e6:.0f} MB, idle {run.idle / 1e6:.0f} MB"


def test_23_12_the_counter_helper_runs_under_a_hard_memory_cap(run: Run) -> None:
    line = next(li for li in run.helper_limits.splitlines() if li.startswith("Max data size"))
    soft = line.split()[3]
    assert soft != "unlimited" and int(soft) <= 1 << 30, line


def test_23_12_the_summary_and_stats_lines_are_exact(run: Run) -> None:
    assert run.code == 0, run.stderr
    big = [line for line in run.stats if int(str(line["chars_before"])) >= 50 * MB]
    assert [line["tokens_before"] for line in big] == [int(mb * MB * TOKENS_PER_A) for mb in SIZES]
    total = sum(int(str(line["tokens_before"])) for line in run.stats)
    summary = re.search(r"tokens before\s+(\d+)", run.stderr)
    assert summary is not None and int(summary.group(1)) == total, run.stderr[-2000:]
    assert "partial" not in run.stderr


def test_23_13_the_next_tiny_call_after_a_huge_result_answers_within_50_ms(run: Run) -> None:
    assert len(run.tiny_ms) == len(SIZES) and max(run.tiny_ms) < 50, run.tiny_ms


def test_23_12_texts_are_counted_in_bounded_spans_cut_at_the_same_places_every_time() -> None:
    text = "a" * (3 * SPAN + 5) + " ordinary words, then more " * 2000 + "中" * (2 * SPAN)
    cuts = list(spans(text))
    assert cuts == list(spans(text)) and cuts[0] == (0, SPAN)
    assert all(end - start <= SPAN for start, end in cuts)
    assert "".join(text[a:b] for a, b in cuts) == text
    assert count_tokens("a" * (12 * SPAN)) == 12 * SPAN // 8


def test_23_12_ordinary_text_counts_exactly_as_one_piece_of_tiktoken() -> None:
    from mcpsqueeze.accounting._tokens import encoding

    text = json.dumps(
        [{"name": f"row {i}", "bio": "Lorem IPSUM 12345 dolor, sit-amet. " * 3} for i in range(3000)]
    )
    assert count_tokens(text) == len(encoding().encode_ordinary(text))
