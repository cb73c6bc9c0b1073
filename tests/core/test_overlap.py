"""The pure overlap engine: line diffs for text, added/removed/changed members for JSON."""

from __future__ import annotations

import difflib
import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcpsqueeze._voice import McpVoice
from mcpsqueeze.core import _overlap as overlap
from mcpsqueeze.core._dedup import render_overlap
from mcpsqueeze.core._overlap import MIN_CHARS, _TooLong, json_changes, line_overlap, overlap_delta, text_diff
from rawclient import assert_golden

GOLDEN = Path(__file__).with_name("golden")


def _source(lines: int) -> str:
    return "".join(f"def function_{i}(x):\n    return x + {i}\n" for i in range(lines))


def test_a_file_re_read_after_a_small_edit_is_a_unified_diff_naming_both_calls() -> None:
    old = _source(200)
    new = old.replace("return x + 17\n", "return x * 17\n")
    delta = overlap_delta(old, new, "call #1 (read_file)", "call #4 (read_file)")
    assert delta is not None and delta.kind == "text"
    assert delta.body.startswith("--- call #1 (read_file)\n+++ call #4 (read_file)\n")
    assert "-    return x + 17\n+    return x * 17\n" in delta.body
    assert delta.unchanged == 399 and delta.total == 400
    assert len(delta.body) < len(new) / 10
    # the diff is exact: applying it to the old text gives the new one
    restored = "".join(difflib.restore(difflib.ndiff(old.splitlines(True), new.splitlines(True)), 2))
    assert restored == new


def test_a_longer_log_after_a_shorter_one_shows_only_the_added_lines() -> None:
    commits = [f"Commit: {i:040x}\nAuthor: a\nMessage: change {i}\n\n" for i in range(200)]
    log, short = "".join(commits), "".join(commits[:100])
    delta = overlap_delta(short, log, "call #2 (git_log)", "call #3 (git_log)")
    assert delta is not None
    assert not [ln for ln in delta.body.splitlines()[2:] if ln.startswith("-")]
    assert delta.body.count("\n+Commit: ") == 100


def test_texts_that_share_few_lines_have_no_delta() -> None:
    assert overlap_delta(_source(100), _source(100).replace("x", "y"), "a", "b") is None
    assert line_overlap("a\nb\nc\nd\n", "a\nx\ny\nz\n") == 0.25


def _line_overlap_plainly(old: str, new: str) -> float:
    """Each new line matched to an unmatched old twin, one by one (as it was)."""
    new_lines = new.splitlines()
    if not new_lines:
        return 0.0
    left: dict[str, int] = {}
    for line in old.splitlines():
        left[line] = left.get(line, 0) + 1
    shared = 0
    for line in new_lines:
        if left.get(line, 0) > 0:
            left[line] -= 1
            shared += 1
    return shared / len(new_lines)


_LINES = st.lists(st.sampled_from(["a", "b", "c", "", "a\r", "\u2028"]), max_size=30).map("\n".join)


@settings(max_examples=300, deadline=None)
@given(_LINES, _LINES)
def test_line_overlap_is_the_share_of_new_lines_with_an_old_twin(old: str, new: str) -> None:
    assert line_overlap(old, new) == _line_overlap_plainly(old, new)


def test_small_and_identical_results_have_no_delta() -> None:
    small = "x\n" * (MIN_CHARS // 4)
    assert overlap_delta(small, small + "y\n", "a", "b") is None
    assert overlap_delta(_source(100), _source(100), "a", "b") is None


def test_a_graph_read_again_after_one_observation_is_one_change_by_entity_name() -> None:
    graph = {
        "entities": [
            {"type": "entity", "name": f"e{i}", "entityType": "t", "observations": [f"fact {i}"]}
            for i in range(50)
        ],
        "relations": [{"from": "e1", "to": "e2", "relationType": "knows"}],
    }
    later = json.loads(json.dumps(graph))
    later["entities"][7]["observations"].append("a new fact")
    changes, unchanged, _ = json_changes(graph, later)
    assert changes == {"added": [{"path": "/entities/7/observations/1", "value": "a new fact"}]}
    assert unchanged >= 50
    delta = overlap_delta(
        json.dumps(graph, indent=2), json.dumps(later, indent=2), "call #1 (read_graph)", "x"
    )
    assert delta is not None and delta.kind == "json"
    assert json.loads(delta.body)["compared_with"] == "call #1 (read_graph)"


def test_a_json_comparison_gives_up_once_its_changes_outgrow_the_limit_and_is_exact_below_it() -> None:
    old = [{"id": i, "status": "open", "note": "x" * 50} for i in range(200)]
    new = [{"id": i, "status": "closed", "note": "y" * 50} for i in range(200)]
    with pytest.raises(_TooLong):  # every item changed: far more than 1,000 chars
        json_changes(old, new, 1000)
    few = [dict(item) for item in old]
    few[3]["status"] = "closed"
    assert json_changes(old, few, 1000) == json_changes(old, few)
    assert json_changes(old, few)[0] == {"changed": [{"path": "/3/status", "value": "closed"}]}


def test_an_overlap_too_different_for_its_limit_is_no_delta() -> None:
    old = json.dumps([{"id": i, "v": "a" * 40} for i in range(100)], indent=1)
    new = json.dumps([{"id": i, "v": "a" * 40 if i % 10 else "b" * 40} for i in range(100)], indent=1)
    assert overlap_delta(old, new, "a", "b") is not None  # ten changed items: well under half
    assert overlap_delta(old, new, "a", "b", limit=100) is None  # but more than 100 characters


def test_a_text_much_shorter_than_the_earlier_one_is_no_delta_as_its_diff_lists_every_removed_line() -> None:
    log = "".join(f"commit {i:040x}\nAuthor: a\n\n    change {i}\n\n" for i in range(300))
    head = log[: len(log) // 10]  # the same log, asked for fewer entries: every line of it is in the old one
    assert len(head) >= MIN_CHARS
    assert overlap_delta(log, head, "call #1 (git_log)", "call #2 (git_log)", limit=20_000) is None


def test_json_objects_report_added_removed_and_changed_keys() -> None:
    old = {"a": 1, "b": {"c": 2, "d": 3}, "gone": True}
    new = {"a": 1, "b": {"c": 2, "d": 4}, "new": [1]}
    changes, unchanged, _ = json_changes(old, new)
    assert changes == {
        "added": [{"path": "/new", "value": [1]}],
        "removed": [{"path": "/gone"}],
        "changed": [{"path": "/b/d", "value": 4}],
    }
    assert unchanged == 2


def test_arrays_without_names_are_matched_by_a_stable_hash_of_each_item() -> None:
    old = [[1, 2], [3, 4], [5, 6]]
    new = [[3, 4], [1, 2], [7, 8]]
    changes, unchanged, total = json_changes(old, new)
    assert changes == {"added": [{"path": "/2", "value": [7, 8]}], "removed": [{"path": "/2"}]}
    assert (unchanged, total) == (2, 3)


def test_removed_named_items_carry_their_name() -> None:
    old = [{"id": 1, "v": "a"}, {"id": 2, "v": "b"}]
    new = [{"id": 2, "v": "b"}]
    changes, _, _ = json_changes(old, new)
    assert changes == {"removed": [{"path": "/0", "id": 1}]}


def test_an_item_named_1_is_not_the_item_named_string_1() -> None:
    old = [{"id": 1, "v": "a"}, {"id": "1", "v": "b"}]
    new = [{"id": "1", "v": "b"}, {"id": 2, "v": "c"}]
    changes, unchanged, total = json_changes(old, new)
    assert changes == {
        "added": [{"path": "/1", "value": {"id": 2, "v": "c"}}],
        "removed": [{"path": "/0", "id": 1}],
    }
    assert (unchanged, total) == (1, 2)


def test_the_overlap_line_is_pinned() -> None:
    rid = "0123456789abcdef0123456789abcdef"
    line = render_overlap(
        number=3, tool="read_text_file", kind="text", unchanged=398, total=400, chars=8400,
        how_to_recover=McpVoice().see_again(rid),
    )  # fmt: skip
    assert_golden(GOLDEN / "overlap_mcp.txt", line + "\n")


def test_the_overlap_line_of_a_shrunk_earlier_result_names_its_recovery() -> None:
    rid, base = "0123456789abcdef0123456789abcdef", "fedcba9876543210fedcba9876543210"
    line = render_overlap(
        number=3, tool="git_log", kind="text", unchanged=400, total=800, chars=36000,
        how_to_recover=McpVoice().see_again(rid),
        base_hint=McpVoice().see_again(base),
    )  # fmt: skip
    assert_golden(GOLDEN / "overlap_mcp_shrunk_base.txt", line + "\n")


def _apply(old: str, diff: str) -> str:
    """Apply a unified diff made by text_diff (the test's own reader, to check the diff is exact)."""
    old_lines = old.splitlines(keepends=True)
    out: list[str] = []
    at = 0
    lines = diff.splitlines(keepends=True)[2:]
    i = 0
    while i < len(lines):
        header = lines[i]
        assert header.startswith("@@ -")
        start = int(header[4:].split(" ")[0].split(",")[0])
        length = header[4:].split(" ")[0].split(",")
        first = start - 1 if len(length) == 1 or int(length[1]) else start
        out += old_lines[at:first]
        at = first
        i += 1
        while i < len(lines) and not lines[i].startswith("@@ -"):
            line = lines[i]
            no_newline = i + 1 < len(lines) and lines[i + 1].startswith("\\ No newline")
            body = line[1:-1] if no_newline else line[1:]
            if line[0] in " -":
                at += 1
            if line[0] in " +":
                out.append(body)
            i += 2 if no_newline else 1
    return "".join(out + old_lines[at:])


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.sampled_from(["a\n", "b\n", "c\n", "same\n", "x = 1\n", "\n"]), min_size=1, max_size=60),
    st.lists(
        st.tuples(
            st.integers(0, 60), st.sampled_from(["ins", "del", "rep"]), st.sampled_from(["q\n", "a\n", "z"])
        )
    ),
)
def test_every_text_diff_applied_to_the_old_text_gives_the_new_text(
    base: list[str], edits: list[tuple[int, str, str]]
) -> None:
    new = list(base)
    for where, what, line in edits:
        where = min(where, len(new))
        if what == "ins":
            new.insert(where, line)
        elif new and where < len(new):
            if what == "del":
                del new[where]
            else:
                new[where] = line
    old_text, new_text = "".join(base), "".join(new)
    diff, unchanged, total = text_diff(old_text, new_text, "old", "new")
    assert _apply(old_text, diff) == new_text
    assert 0 <= unchanged <= total == len(new_text.splitlines())


def test_a_very_repetitive_text_is_diffed_without_the_quadratic_worst_case() -> None:
    old = "same line\n" * 40_000  # milliseconds with difflib's junk heuristic (minutes without it)
    appended = overlap_delta(old, old + "x\n", "a", "b")
    assert appended is not None and appended.body.endswith(
        "@@ -39998,3 +39998,4 @@\n same line\n same line\n same line\n+x\n"
    )
    # edited at both ends, the middle is all "junk" lines: no delta (shown whole), never a long wait
    assert overlap_delta(old, "head\n" + old + "x\n", "a", "b") is None


def test_the_session_history_for_overlap_is_bounded_and_prefers_the_same_call() -> None:
    from mcpsqueeze.core._stages import _Earlier, _History

    history = _History(limit=30)
    for n, (args, text) in enumerate([("a", "x" * 10), ("b", "y" * 10), ("a", "z" * 10)], 1):
        history.add(_Earlier(n, "s:read", args, text, {"content": []}, True))
    assert [e.number for e in history.candidates("s:read", "b")] == [2, 3]
    assert [e.number for e in history.candidates("s:other", "a")] == []
    history.add(_Earlier(4, "s:read", "c", "w" * 10, {"content": [], "structuredContent": {}}, True))
    # #4 weighs 20 (its text again as structuredContent): #1 and #2 are dropped to stay within 30
    assert [e.number for e in history.candidates("s:read", "a")] == [3, 4]
    assert [e.number for e in history.candidates("s:read", "b")] == [4]
    history.add(
        _Earlier(5, "s:read", "d", "v" * 31, {"content": []}, True)
    )  # bigger than the bound: not kept
    assert [e.number for e in history.candidates("s:read", "d")] == [4]


def _records(seed: int, n: int = 300) -> str:
    return json.dumps([{"id": i, "name": f"item-{seed}-{i}", "note": f"n{i * seed}"} for i in range(n)])


def test_a_limit_stops_comparing_documents_whose_changes_are_surely_longer() -> None:
    old, new = _records(1), _records(2)
    unlimited = overlap_delta(old, new, "a", "b")
    assert unlimited is not None and len(unlimited.body) > 20_000  # a delta no one would be shown
    assert overlap_delta(old, new, "a", "b", limit=5_000) is None
    # a limit the delta fits changes nothing
    assert overlap_delta(old, new, "a", "b", limit=len(unlimited.body)) == unlimited


@given(
    st.lists(
        st.dictionaries(
            st.sampled_from(["id", "a", "b", "c"]),
            st.one_of(st.integers(-3, 3), st.booleans(), st.floats(-2, 2), st.text(max_size=3)),
            max_size=4,
        ),
        min_size=1,
        max_size=12,
    ),
    st.lists(st.integers(0, 11), max_size=6),
    st.integers(0, 3000),
)
@settings(max_examples=60, deadline=None)
def test_a_limited_comparison_is_the_unlimited_one_or_none_when_that_is_longer(
    items: list[dict[str, object]], edits: list[int], limit: int
) -> None:
    old = json.dumps({"items": items, "pad": "x" * MIN_CHARS})
    changed = json.loads(old)
    for i in edits:  # 1 and 1.0 and True are equal in Python but not in JSON: changes all the same
        if i < len(changed["items"]):
            changed["items"][i]["a"] = {0: 1.0, 1: True, 2: 0}.get(i % 3)
    new = json.dumps(changed)
    unlimited = overlap_delta(old, new, "a", "b")
    limited = overlap_delta(old, new, "a", "b", limit=limit)
    assert limited == unlimited or (limited is None and unlimited is not None and len(unlimited.body) > limit)


_leaf = st.one_of(
    st.none(), st.booleans(), st.integers(-2, 2), st.sampled_from([0.0, -0.0, 1.0, 2.5]), st.text(max_size=2)
)
_json = st.recursive(
    _leaf,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=2), inner, max_size=3),
    max_leaves=8,
)


@given(_json, _json)
@settings(max_examples=200, deadline=None)
def test_members_are_the_same_exactly_when_their_canonical_json_is(old: object, new: object) -> None:
    from mcpsqueeze.core._dedup import content_digest
    from mcpsqueeze.core._overlap import _same

    assert _same(old, new) == (content_digest(old) == content_digest(new))
    assert _same(old, old)


def test_a_long_named_array_changed_throughout_is_refused_after_comparing_a_sample(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    old = [{"id": i, "status": "open", "note": "x" * 60} for i in range(1000)]
    new = [{"id": i, "status": "closed", "note": "y" * 60} for i in range(1000)]
    compared: list[str] = []
    original = overlap._Changes.compare

    def counting(self: overlap._Changes, old_value: object, new_value: object, path: str) -> None:
        compared.append(path)
        original(self, old_value, new_value, path)

    monkeypatch.setattr(overlap._Changes, "compare", counting)
    with pytest.raises(_TooLong):
        json_changes(old, new, 20_000)
    items = [p for p in compared if p.count("/") == 1]
    assert len(items) <= 16  # the sample only: in full, ~150 items before the changes pass the limit


def test_a_long_named_array_with_a_few_changed_items_is_still_compared_in_full() -> None:
    old = [{"id": i, "status": "open", "note": "x" * 60} for i in range(1000)]
    new = [dict(item) for item in old]
    for i in [*range(0, 1000, 125), *range(7, 1000, 100)]:  # 18 items, 8 of the sample's 16 among them
        new[i]["status"] = "closed"
    assert json_changes(old, new, 1_000) == json_changes(old, new)
    assert len(json_changes(old, new)[0]["changed"]) == 18
