"""Several ranges, pointers and ids in one recovery (issue 21 item 1): answered in order, each part
labelled in `_meta` and exact, so the parts join back into the original byte for byte."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcpsqueeze import UsageError
from mcpsqueeze._lines import split_lines
from mcpsqueeze.core import RecoverRequest, answer, parts_text, recover
from mcpsqueeze.recovery import MemoryCache, RecoveryStore, new_response_id

RID = "0" * 32


def _text_result(text: str) -> dict[str, object]:
    return {"content": [{"type": "text", "text": text}], "isError": False}


lines_text = (
    st.lists(st.text(alphabet="ab \r\t\u2028é", max_size=6), min_size=1, max_size=30)
    .map("\n".join)
    .filter(bool)
)


@settings(max_examples=200, deadline=None)
@given(text=lines_text, data=st.data())
def test_contiguous_ranges_join_back_into_the_original_byte_for_byte(text: str, data: st.DataObject) -> None:
    total = len(split_lines(text))
    cuts = sorted(data.draw(st.sets(st.integers(2, total), max_size=min(total - 1, 8))) if total > 1 else [])
    starts = [1, *cuts]
    specs = [f"{a}-{b - 1}" for a, b in zip(starts, [*cuts, total + 1], strict=True)]
    specs[-1] = f"{starts[-1]}-"  # the last runs to the end
    result = answer(
        [_text_result(text)], RecoverRequest.parse({"response_id": RID, "lines": ",".join(specs)})
    )
    assert parts_text(result).encode() == text.encode()


@settings(max_examples=200, deadline=None)
@given(text=lines_text, data=st.data())
def test_each_range_is_exactly_its_lines_in_the_order_asked(text: str, data: st.DataObject) -> None:
    lines = split_lines(text)
    pairs = data.draw(
        st.lists(st.tuples(st.integers(1, len(lines)), st.integers(0, 5)), min_size=1, max_size=6)
    )
    spec = ",".join(f"{a}-{a + n}" for a, n in pairs)
    result = answer([_text_result(text)], RecoverRequest.parse({"response_id": RID, "lines": spec}))
    texts = [b["text"] for b in result["content"]]
    parts = texts[1:] if len(pairs) > 1 else texts
    assert parts == ["".join(lines[a - 1 : a + n]) for a, n in pairs]


def test_several_ids_and_pointers_answer_in_order_each_labelled() -> None:
    store = RecoveryStore(MemoryCache(), None)
    one, two = new_response_id(), new_response_id()
    store.put(one, json.dumps(_text_result(json.dumps({"a": [1, 2], "b": "x"}))).encode())
    store.put(two, json.dumps(_text_result(json.dumps({"a": [3], "b": "y"}))).encode())
    request = RecoverRequest.parse({"response_id": [one, two], "pointer": ["/b", "/a/0"]})
    result = recover(store, request)
    texts = [b["text"] for b in result["content"]]
    assert texts[1:] == ["x", "1", "y", "3"]
    places = result["_meta"]["mcpsqueeze/parts"]
    assert [(p["block"], p["response_id"], p["pointer"]) for p in places] == [
        (1, one, "/b"), (2, one, "/a/0"), (3, two, "/b"), (4, two, "/a/0"),
    ]  # fmt: skip
    assert one in texts[0] and "4 parts" in texts[0]
    assert RecoverRequest.parse(request.arguments()) == request


def test_too_many_parts_is_a_usage_error_naming_the_bound() -> None:
    with pytest.raises(UsageError, match="at most 50"):
        RecoverRequest.parse({"response_id": [RID] * 10, "lines": ",".join(f"{i}" for i in range(1, 7))})
    with pytest.raises(UsageError, match="1 to 20"):
        RecoverRequest.parse({"response_id": [RID] * 21})


@settings(max_examples=100, deadline=None)
@given(text=lines_text, data=st.data())
def test_a_client_that_joins_the_blocks_still_reads_each_parts_first_line_whole(
    text: str, data: st.DataObject
) -> None:
    """Some clients concatenate a result's text blocks with nothing between them: the label (and a
    page's note) must end, or start, its own line so that no part's first line runs into it."""
    lines = split_lines(text)
    firsts = data.draw(st.lists(st.integers(1, len(lines)), min_size=2, max_size=4))
    result = answer(
        [_text_result(text)], RecoverRequest.parse({"response_id": RID, "lines": ",".join(map(str, firsts))})
    )
    joined = "".join(b["text"] for b in result["content"])
    label = result["content"][0]["text"]
    assert label.endswith("\n") and joined.startswith(label)
    assert joined[len(label) :].startswith(lines[firsts[0] - 1])


def test_a_pages_note_starts_its_own_line_when_the_page_ends_inside_a_line() -> None:
    store = RecoveryStore(MemoryCache(), None)
    rid = new_response_id()
    store.put(rid, json.dumps(_text_result("abc\ndef\nghi\n")).encode())
    inside = recover(store, RecoverRequest.parse({"response_id": rid}), 6)  # "abc\nde" | "f\nghi\n"
    assert inside["content"][1]["text"].startswith("\nmcpsqueeze: page 1 of 2")
    at_end = recover(store, RecoverRequest.parse({"response_id": rid}), 4)  # "abc\n" | "def\n" | ...
    assert at_end["content"][1]["text"].startswith("mcpsqueeze: page 1 of 3")


def test_parts_of_one_original_name_its_id_once() -> None:
    """Several ranges of one original: the id is in the label once, not in every part's (an id is
    about 20 tokens); parts of several originals each name theirs."""
    text = "".join(f"line {i}\n" for i in range(1, 40))
    one = answer([_text_result(text)], RecoverRequest.parse({"response_id": RID, "lines": "4-5,13-23,30"}))
    label = one["content"][0]["text"]
    assert label.count(RID) == 1 and f"3 parts of {RID} follow" in label and "1) lines 4-5 of 39;" in label
    other = "1" * 32
    two = answer(
        [_text_result(text), _text_result(text)],
        RecoverRequest.parse({"response_id": [RID, other], "lines": "4-5"}),
    )
    label = two["content"][0]["text"]
    assert f"1) {RID} lines 4-5 of 39; 2) {other} lines 4-5 of 39" in label
