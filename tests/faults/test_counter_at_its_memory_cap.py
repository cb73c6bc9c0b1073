"""The token counter's helper at its memory cap (RLIMIT_DATA, which it never raises when it starts under a
lower one): the proxy counts what the helper could not, so the figures stay exact; and when a count cannot
be made at all, the summary, the stats file and the report say that a call's tokens are missing instead
of printing totals that silently leave the call out. A real helper process under a real cap."""

from __future__ import annotations

import json
import re
import resource
import subprocess
import types
from pathlib import Path
from typing import Any

import pytest

import mcpsqueeze.accounting._counter as counter_module
import mcpsqueeze.accounting._tokens as tokens_module
from mcpsqueeze.accounting import Accountant, CallRecord
from mcpsqueeze.accounting._report import load_report, render_text
from mcpsqueeze.accounting._stats import render_summary
from mcpsqueeze.accounting._tokens import count_tokens

CAP = 48 * 1024 * 1024  # below what the helper needs to load its vocabulary (~80 MB of data)
TEXTS = ["alpha beta gamma " * 4000, '{"rows": [' + ", ".join(f'{{"id": {i}}}' for i in range(3000)) + "]}"]


@pytest.fixture
def capped_helper(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Every helper started from now on starts under `CAP`; the pids of those started."""
    started: list[int] = []

    def capped() -> None:
        resource.setrlimit(resource.RLIMIT_DATA, (CAP, resource.getrlimit(resource.RLIMIT_DATA)[1]))

    def popen(*args: Any, **kwargs: Any) -> subprocess.Popen[bytes]:
        proc = subprocess.Popen(*args, preexec_fn=capped, **kwargs)
        started.append(proc.pid)
        return proc

    shim = types.SimpleNamespace(**{**vars(subprocess), "Popen": popen})
    monkeypatch.setattr(counter_module, "subprocess", shim)
    return started


def _record(accountant: Accountant, number: int, text: str) -> None:
    accountant.record(CallRecord(tool="t", number=number, action="shrink", before_text=text,
                                 after_text=text[:100], added_latency_ms=1.0, session="s"))  # fmt: skip


def test_at_its_memory_cap_the_helper_gives_way_and_the_figures_stay_exact(
    tmp_path: Path, capped_helper: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    here: list[int] = []  # the texts the proxy counted itself, the helper having failed on them
    count_here = counter_module.TokenCounter._count_here

    def counted_here(self: counter_module.TokenCounter, seq: int) -> None:
        here.append(seq)
        count_here(self, seq)

    monkeypatch.setattr(counter_module.TokenCounter, "_count_here", counted_here)
    accountant = Accountant(tmp_path / "stats.jsonl")
    for number, text in enumerate(TEXTS, 1):
        _record(accountant, number, text)
    totals = accountant.close()
    assert capped_helper, "the helper was started (under the cap)"
    assert len(here) == 4  # every text (two calls, before and after) fell back to the proxy
    assert totals.calls == 2 and totals.uncounted == 0
    assert totals.tokens_before == sum(count_tokens(t) for t in TEXTS)
    assert totals.tokens_after == sum(count_tokens(t[:100]) for t in TEXTS)
    assert not any(Path(f"/proc/{pid}").exists() for pid in capped_helper)  # ended and reaped


def test_a_count_that_cannot_be_made_is_reported_missing_never_left_out(
    tmp_path: Path, capped_helper: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    def out_of_memory(text: str) -> int:  # the proxy is at its limit too: its own count fails
        if len(text) > 1000:
            raise MemoryError
        return count_tokens(text)

    monkeypatch.setattr(tokens_module, "count_tokens", out_of_memory)
    stats = tmp_path / "stats.jsonl"
    accountant = Accountant(stats)
    _record(accountant, 1, TEXTS[0])
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
