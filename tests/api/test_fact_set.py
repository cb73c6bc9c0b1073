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


def test_every_range_a_fact_set_preview_names_reads_back_exactly_and_so_does_the_whole() -> None:
    import asyncio
    import re

    from mcpsqueeze import Squeezer
    from mcpsqueeze._lines import split_lines

    cases = build(0)[::3]  # (a third of them: every kind and most generators)
    squeezer = Squeezer()
    try:
        for case in cases:
            result = {"content": [{"type": "text", "text": case.text}], "isError": False}
            presented = asyncio.run(squeezer.present("facts", case.generator, case.arguments, result))
            preview = presented["content"][0]["text"]
            rid = presented["_meta"]["truncation"]["response_id"]
            assert squeezer.recover(rid) == case.text
            for a, b in re.findall(r"\[chars (\d+)-(\d+) folded", preview):
                assert (
                    squeezer.recover(rid, offset=int(a), length=int(b) - int(a)) == case.text[int(a) : int(b)]
                )
            for a, b in re.findall(r"\[lines (\d+)-(\d+) folded", preview):
                assert squeezer.recover(rid, lines=f"{a}-{b}") == "".join(
                    split_lines(case.text)[int(a) - 1 : int(b)]
                )
    finally:
        squeezer.close()
