"""Recoveries that fit the client: an answer over the page size comes as pages, each
naming the exact arguments of the next in `_meta["mcpsqueeze/next"]` (and in its text); the pages join
back into the original byte for byte. Through `mcpsqueeze wrap --page-size` over each transport, too."""

from __future__ import annotations

import json
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcpsqueeze import UsageError
from mcpsqueeze._clients import PROFILES, ClientProfile, structured_json
from mcpsqueeze._lines import split_lines
from mcpsqueeze.core import RecoverRequest, parts_text, recover
from mcpsqueeze.recovery import MemoryCache, RecoveryStore, new_response_id
from rawclient import RawClient


def _store(text: str) -> tuple[RecoveryStore, str]:
    store = RecoveryStore(MemoryCache(), None)
    rid = new_response_id()
    store.put(rid, json.dumps({"content": [{"type": "text", "text": text}], "isError": False}).encode())
    return store, rid


def _follow(ask: Any, arguments: dict[str, Any], page_size: int) -> tuple[str, int]:
    """Every page's text joined, following `_meta["mcpsqueeze/next"]` from `arguments`; and the count."""
    joined, count = "", 0
    while True:
        page = ask(arguments)
        count += 1
        meta = page.get("_meta") or {}
        assert len(parts_text(page)) <= page_size
        joined += parts_text(page)
        if "mcpsqueeze/next" not in meta:
            return joined, count
        assert json.dumps(meta["mcpsqueeze/next"], separators=(",", ":")) in page["content"][1]["text"]
        arguments = meta["mcpsqueeze/next"]


@settings(max_examples=150, deadline=None)
@given(
    text=st.text(min_size=1, max_size=400),
    size=st.integers(1, 60),
    spec=st.sampled_from([None, "1-", "2-3,1-"]),
)
def test_pages_join_back_into_the_answer_byte_for_byte(text: str, size: int, spec: str | None) -> None:
    store, rid = _store(text)
    arguments: dict[str, Any] = {"response_id": rid} | ({"lines": spec} if spec else {})
    if spec == "2-3,1-" and len(split_lines(text)) < 2:
        arguments["lines"] = "1-,1-"
    whole = parts_text(recover(store, RecoverRequest.parse(arguments)))
    joined, count = _follow(lambda a: recover(store, RecoverRequest.parse(a), size), arguments, size)
    assert joined.encode() == whole.encode()
    assert count == max(1, -(-len(whole) // size))


def test_an_answer_that_fits_is_not_paged_and_a_page_past_the_end_is_a_usage_error() -> None:
    store, rid = _store("short")
    assert recover(store, RecoverRequest.parse({"response_id": rid}), 100)["content"][0]["text"] == "short"
    with pytest.raises(UsageError, match="past the last page"):
        recover(store, RecoverRequest.parse({"response_id": rid, "page": 3}), 100)


BY_NAME = {p.name: p for p in PROFILES}
SUMMARY = "600 runs, 120 failed"
ROWS = {"rows": [{"id": i, "status": "ok" if i % 5 else "failed", "detail": f"run {i}"} for i in range(600)]}


def _stored(result: dict[str, Any]) -> tuple[RecoveryStore, str]:
    store = RecoveryStore(MemoryCache(), None)
    rid = new_response_id()
    store.put(rid, json.dumps(result).encode())
    return store, rid


def _whole_as(store: RecoveryStore, rid: str, client: ClientProfile | None) -> str:
    """The whole original as the recover tool gives it to ``client``, its pages followed and joined."""
    fit = None if client is None else client.answer_limits(client.declared_size(40_000))
    joined, arguments = "", {"response_id": rid}
    while arguments:
        page = recover(store, RecoverRequest.parse(arguments), 40_000, fit, client)
        assert "structuredContent" not in page
        if fit is not None:
            assert fit.fits("\n".join(b["text"] for b in page["content"]))
        joined += parts_text(page)
        arguments = (page.get("_meta") or {}).get("mcpsqueeze/next")
    return joined


@pytest.mark.parametrize("name", ["claude-code", "codex", "vscode"])
def test_the_whole_original_is_what_the_clients_model_saw_when_its_structured_content_says_more(
    name: str,
) -> None:
    store, rid = _stored(
        {"content": [{"type": "text", "text": SUMMARY}], "structuredContent": ROWS, "isError": False}
    )
    assert _whole_as(store, rid, BY_NAME[name]) == structured_json(ROWS)
    assert _whole_as(store, rid, None) == SUMMARY  # no profile: the text, as before
    assert _whole_as(store, rid, BY_NAME["qwen-code"]) == SUMMARY  # its model reads the text
    assert _whole_as(store, rid, BY_NAME["copilot-cli"]) == f"{SUMMARY}\n{structured_json(ROWS)}"


def test_the_whole_original_is_its_text_when_its_structured_content_repeats_it_or_it_is_an_error() -> None:
    text = "".join(f"line {i}\n" for i in range(5000))
    for result in (
        {"content": [{"type": "text", "text": text}], "structuredContent": {"result": text}},
        {"content": [{"type": "text", "text": text}], "structuredContent": ROWS, "isError": True},
    ):
        store, rid = _stored(result)
        assert _whole_as(store, rid, BY_NAME["claude-code"]) == text
        assert _whole_as(store, rid, BY_NAME["codex"]) == text


def test_wrap_pages_a_large_recovery_and_the_pages_join_back(
    tmp_path: Path, wrap_door: Callable[..., AbstractContextManager[RawClient]]
) -> None:
    with wrap_door(["--page-size", "1000", "--recovery-dir", str(tmp_path / "rec")]) as client:
        client.initialize()
        rid = client.call("search_issues", {"query": "bug", "limit": 60})["_meta"]["truncation"][
            "response_id"
        ]
        first = client.call("squeeze_recover", {"response_id": rid})
        joined, count = _follow(lambda a: client.call("squeeze_recover", a), {"response_id": rid}, 1000)
    original = json.loads((tmp_path / "rec" / f"mcpsqueeze-{rid}.json").read_text())["content"][0]["text"]
    assert joined == original and count > 1
    assert first["_meta"]["mcpsqueeze/next"] == {"response_id": rid, "page": 1}


def _ask(store: RecoveryStore, client: ClientProfile | None, arguments: dict[str, Any]) -> dict[str, Any]:
    fit = None if client is None else client.answer_limits(client.declared_size(40_000))
    return recover(store, RecoverRequest.parse(arguments), 40_000, fit, client)


def _recovered(
    store: RecoveryStore, rid: str, client: ClientProfile | None, **arguments: Any
) -> dict[str, Any]:
    return _ask(store, client, {"response_id": rid, **arguments})


def _read(store: RecoveryStore, rid: str, client: ClientProfile | None, **arguments: Any) -> str:
    """What a recover call gives ``client``, its pages followed and joined."""
    return _follow(lambda more: _ask(store, client, more), {"response_id": rid, **arguments}, 40_000)[0]


@pytest.mark.parametrize("name", ["claude-code", "codex"])
def test_grep_search_and_lines_read_the_structured_rows_the_clients_model_saw_not_only_the_summary(
    name: str,
) -> None:
    store, rid = _stored(
        {"content": [{"type": "text", "text": SUMMARY}], "structuredContent": ROWS, "isError": False}
    )
    client = BY_NAME[name]
    found = _recovered(store, rid, client, grep="failed")
    assert found["_meta"]["mcpsqueeze/search"]["total"] == 120
    assert '/rows/5/status: "failed"' in found["content"][0]["text"]
    ranked = _recovered(store, rid, client, search="failed")
    assert ranked["_meta"]["mcpsqueeze/search"]["total"] == 120
    assert "/rows/0/status" in ranked["content"][0]["text"]
    # A pointer a hit names reads that row; a line range reads the JSON the model saw.
    row = _recovered(store, rid, client, pointer="/rows/5")
    assert json.loads(row["content"][0]["text"]) == ROWS["rows"][5]
    assert _read(store, rid, client, lines="1") == structured_json(ROWS)
    # A window reads the text: the full answer's first page names its rest as one.
    assert _read(store, rid, client, offset=4, length=4) == SUMMARY[4:8]
    # Without a profile, or for a client whose model reads the text, they read the text.
    for other in (None, BY_NAME["qwen-code"]):
        found = _recovered(store, rid, other, grep="failed")
        assert found["_meta"]["mcpsqueeze/search"]["total"] == 1
        assert found["content"][0]["text"].endswith(f"1:{SUMMARY}")
        assert _recovered(store, rid, other, search="failed")["_meta"]["mcpsqueeze/search"]["total"] == 1
        assert _read(store, rid, other, lines="1") == SUMMARY
    # A structuredContent that merely repeats the text: they read the text, by its lines.
    text = "".join(f"run {i}: {'ok' if i % 5 else 'failed'}\n" for i in range(600))
    store, rid = _stored({"content": [{"type": "text", "text": text}], "structuredContent": {"result": text}})
    found = _recovered(store, rid, client, grep="failed")
    assert found["_meta"]["mcpsqueeze/search"]["total"] == 120
    assert "\n6:run 5: failed" in found["content"][0]["text"]
    assert _read(store, rid, client, lines="2-3") == "run 1: ok\nrun 2: ok\n"


def test_for_a_client_that_shows_both_lines_and_grep_read_the_text_then_the_structured_json() -> None:
    store, rid = _stored(
        {"content": [{"type": "text", "text": SUMMARY}], "structuredContent": ROWS, "isError": False}
    )
    client = BY_NAME["copilot-cli"]
    assert _recovered(store, rid, client, grep="failed")["_meta"]["mcpsqueeze/search"]["total"] == 2
    assert _whole_as(store, rid, client) == f"{SUMMARY}\n{structured_json(ROWS)}"
    assert _read(store, rid, client, lines="2") == structured_json(ROWS)


def test_a_pointer_reads_the_structured_content_the_model_saw_even_when_the_text_is_other_json() -> None:
    text = json.dumps({"summary": SUMMARY})
    store, rid = _stored({"content": [{"type": "text", "text": text}], "structuredContent": ROWS})
    row = _recovered(store, rid, BY_NAME["claude-code"], pointer="/rows/5")
    assert json.loads(row["content"][0]["text"]) == ROWS["rows"][5]
    assert (
        "/rows/5/status"
        in _recovered(store, rid, BY_NAME["claude-code"], grep="failed")["content"][0]["text"]
    )
    summary = _recovered(store, rid, None, pointer="/summary")  # no profile: the text's JSON, as before
    assert summary["content"][0]["text"] == SUMMARY
