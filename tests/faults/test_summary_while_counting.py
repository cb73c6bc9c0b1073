"""Issue 23 item 13, the summary's side: counting never held a call up, so at the exit it may still be
running; the exit then says so plainly (with what is left), and the exact figures follow."""

from __future__ import annotations

import logging
import random

import pytest

from mcpsqueeze.accounting._stats import Accountant, CallRecord
from mcpsqueeze.accounting._tokens import count_tokens

_WORDS = ["alpha", "beta", "gamma", "delta", "x", "yy", "zeta", "lorem", "ipsum", "42", "Mixed", "tEXT"]


def test_23_13_an_exit_while_counting_says_so_then_gives_exact_figures(
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
