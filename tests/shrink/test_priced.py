"""The priced packing, tested directly: exact sizes, honest counts, per-string and per-item choices."""

from __future__ import annotations

import json
import random
import re
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcpsqueeze._jsonbytes import dumps_text as dumps
from mcpsqueeze.shrink._copy import Plans, deep_keys
from mcpsqueeze.shrink._limits import limit_search
from mcpsqueeze.shrink._priced import priced

GAP = re.compile(r"^…\[#(\d+)(?:-(\d+))? omitted\]$")
CUT = re.compile(r"…\[\+(\d+)\]$")
WORDS = [
    "the",
    "quick",
    "brown",
    "fox",
    "jumps",
    "over",
    "lazy",
    "dog",
    "data",
    "server",
    "request",
    "response",
    "token",
    "cache",
]


def _sentence(rng: random.Random, lo: int, hi: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(lo, hi)))


def _records(rng: random.Random, n: int) -> dict[str, Any]:
    issues = []
    for i in range(n):
        issue: dict[str, Any] = {
            "id": i,
            "summary": _sentence(rng, 2, 6),
            "labels": rng.sample(WORDS, rng.randint(0, 3)),
            "description": _sentence(rng, 20, 90),
        }
        if i == 377:
            issue["resolution"] = "fixed"
        if i == 411:
            issue["watchers"] = [{"user": "ana", "since": "2024-01-01"}]
        issues.append(issue)
    return {"total": n, "issues": issues, "next": "token"}


def _tree(rng: random.Random, depth: int = 0) -> list[Any]:
    entries: list[Any] = []
    for i in range(rng.randint(3, 9) if depth < 4 else rng.randint(1, 4)):
        if depth < 4 and rng.random() < 0.35:
            entries.append({"name": f"dir_{i}", "type": "directory", "children": _tree(rng, depth + 1)})
        else:
            entries.append({"name": f"{rng.choice(WORDS)}_{i}.py", "type": "file"})
    return entries


def _graph(rng: random.Random, n: int = 120) -> dict[str, Any]:
    names = [f"{rng.choice(WORDS)}_{i}" for i in range(n)]
    return {
        "entities": [
            {"name": name, "observations": [_sentence(rng, 4, 12) for _ in range(rng.randint(1, 5))]}
            for name in names
        ],
        "relations": [{"from": rng.choice(names), "to": rng.choice(names)} for _ in range(2 * n)],
    }


def _counts(node: Any) -> tuple[int, int]:
    """(items named by gap markers, strings ending in a cut marker) in a condensed copy."""
    items = cuts = 0
    stack = [node]
    while stack:
        cur = stack.pop()
        if isinstance(cur, dict):
            stack.extend(cur.values())
        elif isinstance(cur, list):
            stack.extend(cur)
        elif isinstance(cur, str):
            if m := GAP.match(cur):
                first, last = int(m.group(1)), int(m.group(2) or m.group(1))
                items += last - first + 1
            elif CUT.search(cur):
                cuts += 1
    return items, cuts


DOCS = {
    "records": _records(random.Random(1), 500),
    "tree": _tree(random.Random(7)),
    "graph": _graph(random.Random(3)),
}


@pytest.mark.parametrize("name", sorted(DOCS))
@pytest.mark.parametrize("target", [800, 3000, 10000])
def test_size_is_exact_within_target_and_counts_are_honest(name: str, target: int) -> None:
    copy = priced(DOCS[name], target, Plans())
    assert copy is not None
    text = dumps(copy.value)
    assert len(text) == copy.size <= target
    assert _counts(copy.value) == (copy.items_omitted, copy.strings_truncated)


@pytest.mark.parametrize("name", sorted(DOCS))
@pytest.mark.parametrize("target", [1500, 4000, 10000])
def test_keeps_at_least_as_many_values_as_the_limit_search(name: str, target: int) -> None:
    ours = priced(DOCS[name], target, Plans())
    baseline = limit_search(DOCS[name], target, Plans())
    assert ours is not None and baseline is not None
    assert ours.intact >= baseline.intact


def test_field_names_of_rare_items_stay_visible() -> None:
    doc = DOCS["records"]
    copy = priced(doc, 2500, Plans())
    assert copy is not None
    assert deep_keys(copy.value) == deep_keys(doc)  # resolution, watchers, user, since included
    shown = [item for item in copy.value["issues"] if isinstance(item, dict)]  # type: ignore[index]
    assert {377, 411} <= {item["id"] for item in shown}


def test_first_and_last_items_of_a_top_array_are_kept() -> None:
    copy = priced(DOCS["records"], 6000, Plans())
    assert copy is not None
    issues = copy.value["issues"]  # type: ignore[index]
    assert issues[0]["id"] == 0 and issues[-1]["id"] == 499


def test_each_string_decides_for_itself() -> None:
    doc = [{"id": i, "title": f"short title {i}", "body": "lorem ipsum " * 200} for i in range(50)]
    copy = priced(doc, 3000, Plans())
    assert copy is not None
    shown = [item for item in copy.value if isinstance(item, dict)]  # type: ignore[attr-defined]
    assert len(shown) > 5
    assert all(item["title"] == f"short title {item['id']}" for item in shown)  # short strings whole
    assert all(item["body"].endswith("…[+2392]") for item in shown)  # the long ones cut


def test_a_tree_keeps_whole_subtrees_rather_than_scattered_gaps() -> None:
    copy = priced(DOCS["tree"], 3000, Plans())
    assert copy is not None
    gaps = sum(1 for line in dumps(copy.value).split('"') if GAP.match(line))
    shown_files = dumps(copy.value).count('"type":"file"')
    assert gaps * 4 < shown_files  # a few gap markers for many entries shown


def test_a_retry_at_a_close_target_reuses_the_compiled_document() -> None:
    plans = Plans()
    first = priced(DOCS["graph"], 5000, plans)
    compiled = plans.priced
    second = priced(DOCS["graph"], 5100, plans)
    assert first is not None and second is not None
    assert plans.priced is compiled
    assert first.size <= 5000 and second.size <= 5100
    assert second.intact >= first.intact


def test_the_same_array_object_twice_is_sized_per_place() -> None:
    shared = [{"n": i, "text": "word " * 30} for i in range(200)]
    doc = {"a": shared, "b": shared}  # aliasing: only possible for documents built in Python
    copy = priced(doc, 4000, Plans())
    assert copy is not None
    assert len(dumps(copy.value)) == copy.size <= 4000


def test_none_when_not_even_the_skeleton_fits() -> None:
    doc = {f"key{i}": [1, 2, 3] for i in range(500)}  # 500 keys always shown
    assert priced(doc, 1000, Plans()) is None


JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=80),
    lambda children: (
        st.lists(children, max_size=12) | st.dictionaries(st.text(max_size=8), children, max_size=6)
    ),
    max_leaves=80,
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(doc=JSON.filter(lambda v: isinstance(v, (dict, list))), target=st.integers(2, 3000))
def test_generated_documents_fit_exactly(doc: Any, target: int) -> None:
    doc = json.loads(json.dumps(doc))  # as the engine sees it: parsed, no aliasing
    copy = priced(doc, target, Plans())
    if copy is None:
        return
    text = dumps(copy.value)
    assert len(text) == copy.size <= target
    assert type(copy.value) is type(doc)
    if isinstance(doc, dict):
        assert list(copy.value) == list(doc)  # type: ignore[call-overload]
    assert _counts(copy.value)[1] == copy.strings_truncated


def test_many_deeply_nested_items_are_sized_without_deep_recursion() -> None:
    deep: Any = "x"
    for _ in range(900):  # about as deep as the JSON parser goes
        deep = [deep, "pad" * 5]
    doc = json.loads(json.dumps({"items": [deep] * 100}))
    copy = priced(doc, 4000, Plans())
    assert copy is not None
    assert len(dumps(copy.value)) == copy.size <= 4000
