"""What stands out from its siblings is kept first: a table row, a JSON record, a line, a sentence."""

from __future__ import annotations

import csv
import json
import random
import re
from collections import Counter
from itertools import chain, zip_longest
from pathlib import Path

from hypothesis import example, given, settings
from hypothesis import strategies as st
from outlines import rebuild

from mcpsqueeze.shrink import RecoveryHint, shrink_texts
from mcpsqueeze.shrink._plans import _columns
from mcpsqueeze.shrink._unusual import (
    MISSING,
    _median_deviation,
    rare_word_scores,
    standouts,
    unusual_items,
    unusual_records,
)

FIXTURES = Path(__file__).parent / "fixtures"


def _fixture(name: str) -> str:
    return (FIXTURES / name).read_text(encoding="utf-8")


def test_a_csv_row_out_of_its_columns_range_is_in_the_golden_outline(hint: RecoveryHint, golden) -> None:  # type: ignore[no-untyped-def]
    table = _fixture("readings.csv")
    shrunk = shrink_texts([table], 20000, hint, above=6000)
    assert shrunk is not None and shrunk.report.strategy == "text:outline-csv"
    (preview,) = shrunk.texts
    assert "S-105,lab-b,2026-03-02T02:36,91.4,41\n" in preview
    assert rebuild(preview, table) == table
    golden("outline_readings_csv.txt", preview)


def test_json_records_keep_the_one_odd_record_whole_in_the_golden_preview(hint: RecoveryHint, golden) -> None:  # type: ignore[no-untyped-def]
    records = _fixture("tickets.json")
    shrunk = shrink_texts([records], 20000, hint, above=6000)
    assert shrunk is not None and shrunk.report.strategy == "json:priced"
    (preview,) = shrunk.texts
    odd = json.loads(records)[77]
    assert json.dumps(odd, separators=(",", ":")) in preview  # every field, the note not cut
    assert "omitted]" in preview  # while ordinary items are folded
    golden("json_tickets.txt", preview + "\n" + (shrunk.notice or ""))


def test_rows_of_few_categories_keep_the_one_seen_once() -> None:
    rows = [
        [f"E{i}", random.Random(i).choice(["Sales", "Support", "Legal"]), f"{i * 3 % 97}"] for i in range(200)
    ]
    rows[123][1] = "Skunkworks"
    scores = unusual_records(list(zip(*rows, strict=True)), len(rows))
    assert standouts(scores) == [123]


def test_a_number_far_out_of_its_column_stands_out_and_a_long_tail_does_not() -> None:
    values: list[object] = [round(20 + (i % 17) / 4, 2) for i in range(300)]
    values[40] = 412.7
    assert standouts(unusual_records([values], 300)) == [40]
    tail: list[object] = [2**k for k in range(300)]  # every value far from the median: none stands out
    assert standouts(unusual_records([tail], 300)) == []


def test_a_field_only_one_record_has_stands_out() -> None:
    items: list[object] = [{"id": i, "name": f"n{i}"} for i in range(50)]
    items[31] = {"id": 31, "name": "n31", "suspension_reason": "chargeback"}
    assert unusual_items(items) == [31]


_SCRIPTS = "abcXYZ_019\n .,'-\u00e9\u00c4\u00df\u0130\u0131\ufb01\u00bd\u0663\u6771\u0307\u00a0\u2019\u2014\u03a3\u03c3\u01c5\ud800"


@settings(max_examples=300, deadline=None)
@given(st.lists(st.text(alphabet=_SCRIPTS, max_size=30), min_size=8, max_size=30))
@example(["ab\u03a3 x", "ab\u03c3 y"] + ["zz"] * 6)  # a final capital sigma lowers to a sigma of its own
@example(["\u2014".join(chr(c) for c in range(0x2000, 0x2100)) + " caf\u00e9 x", "caf\u00e9"] + ["q"] * 6)
@example([f"line {i} of words{'' if i == 9 else chr(10)}" for i in range(9)] + ["odd\n\nlines\n"])
@example(["same 12 words\n", "same 345 words\n"] * 5 + ["other 6 words"])
def test_rare_words_are_runs_of_three_letters_or_more_lowered_in_any_script(texts: list[str]) -> None:
    words = [set(re.findall(r"[^\W\d_]{3,}", text.lower())) for text in texts]
    used = Counter(chain.from_iterable(words))
    raw = [sum(1.0 if used[w] == 1 else 0.5 if used[w] == 2 else 0.0 for w in ws) for ws in words]
    usual = sorted(raw)[len(raw) // 2]
    assert rare_word_scores(texts) == [max(0.0, r - usual) for r in raw]


def test_identical_siblings_have_no_standout() -> None:
    assert standouts(rare_word_scores(["the same line of words"] * 40)) == []
    assert unusual_items([{"a": 1, "b": "x"}] * 40) == []


def test_words_of_the_call_rank_json_items_first_when_they_tell_items_apart() -> None:
    items: list[object] = [
        {"title": f"note {i}", "body": ("budget", "plan", "review")[i % 3]} for i in range(60)
    ]
    assert unusual_items(items) == []
    assert unusual_items(items, ("note",)) == []  # a word every item has tells none apart
    assert unusual_items(items, ("budget",)) == []  # ... nor one a third of them have
    items[44] = {"title": "note 44", "body": "quarterly figures"}
    assert unusual_items(items, ("quarterly",)) == [44]


@settings(max_examples=30, deadline=None)
@given(
    st.integers(min_value=20, max_value=300),
    st.integers(min_value=0, max_value=10_000),
    st.sampled_from(["category", "number", "field"]),
)
def test_one_planted_oddity_among_uniform_records_is_found(n: int, seed: int, kind: str) -> None:
    rng = random.Random(seed)
    records: list[object] = [
        {"id": i, "kind": rng.choice(["a", "b", "c"]), "size": rng.randrange(100, 120)} for i in range(n)
    ]
    odd = rng.randrange(n)
    record = records[odd]
    assert isinstance(record, dict)
    if kind == "category":
        record["kind"] = "zeta"
    elif kind == "number":
        record["size"] = 100_000
    else:
        record["note"] = "only here"
    assert unusual_items(records)[:1] == [odd]


def test_missing_values_are_not_a_category_of_their_own() -> None:
    column: list[object] = [MISSING] * 30 + ["x"] * 30
    assert unusual_records([column], 60) == {}


_CELLS = st.text(alphabet='ab1 ,\t"\r', max_size=6)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.lists(_CELLS, min_size=1, max_size=5), min_size=1, max_size=12),
    st.sampled_from([",", "\t"]),
    st.booleans(),
)
@example([["1", "a"], ["2", "b"], ["3", "c", "d"], ["4", '"x"'], ["5"]], ",", False)
@example([["1", "a"], ['x"y', '"b'], ["3", "c"]], ",", True)
def test_table_cells_are_read_by_column_as_csv_reader_reads_them(
    rows: list[list[str]], delimiter: str, last_line_ended: bool
) -> None:
    lines = [delimiter.join(row) + "\n" for row in rows]
    if not last_line_ended:
        lines[-1] = lines[-1][:-1]
    lines = [line for line in lines if line.strip()]  # (a table's blank lines are no rows)
    columns = _columns(lines, delimiter)
    try:
        cells = list(csv.reader(lines, delimiter=delimiter))
    except csv.Error:
        return
    if columns is not None:
        assert len(cells) == len(lines)
        assert [tuple(c) for c in columns] == list(zip_longest(*cells, fillvalue=""))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(st.integers(-5, 5).map(float), st.floats(-1e6, 1e6)), min_size=1, max_size=60))
def test_the_median_deviation_is_the_middle_of_the_sorted_distances(values: list[float]) -> None:
    present = sorted(values)
    median = present[len(present) // 2]
    assert _median_deviation(present) == sorted(abs(v - median) for v in present)[len(present) // 2]
