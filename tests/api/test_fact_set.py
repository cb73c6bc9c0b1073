"""Previews show what matters: on the fact set (tests/factset), at the Python API's defaults, most
planted answers are visible in the preview, the rest are found by one search, and the agent pays far
less than for the whole outputs."""

from __future__ import annotations

from factset import KINDS, build
from factset._score import score


def test_the_fact_sets_answers_are_visible_or_one_search_away_at_a_fraction_of_the_cost() -> None:
    totals, scored = score(build(0))
    assert totals.outputs == 62 and totals.whole == 0
    assert totals.visible >= 48, totals.table()
    assert totals.more == 0, [s.case.name for s in scored if s.outcome == "more"]
    assert totals.cost <= 100_000, totals.table()
    for kind in KINDS:  # every kind previews by its structure, none at the price of its whole text
        outputs, visible, _search, _more, _cost = totals.by_kind[kind]
        assert visible * 2 >= outputs, (kind, totals.table())
    assert totals.cost * 5 <= totals.direct
