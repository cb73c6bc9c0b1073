"""The numbers agree. The text summary names what "passed through" counts as --json
names it (a dedup pointer's figure: tests/core/test_dedup_pointer_numbers.py)."""

from __future__ import annotations

import pytest

from mcpsqueeze.accounting._stats import Totals, render_summary

pytestmark = pytest.mark.fuzz


def test_passed_through_names_its_passthrough_and_errors_as_json_does() -> None:
    totals = Totals()
    for action in ["passthrough"] * 5 + ["error"] * 3:
        totals.add(action, 1, 1)
    assert "passed through   8 (passthrough 5, errors 3)\n" in render_summary(totals) + "\n"
    plain = Totals()
    plain.add("passthrough", 1, 1)
    assert "passed through   1\n" in render_summary(plain) + "\n"
