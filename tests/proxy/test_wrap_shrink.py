"""Shrinking through `mcpsqueeze wrap`, over each of its transports: every kind of result and its recovery.
(What happens when an original cannot be stored: test_wrap_storage_faults.py.)"""

from __future__ import annotations

import contextlib
import json
import os
import stat
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

import pytest

from memwrap import MemoryWrap
from rawclient import RawClient, text

BUDGET = 5000

# These tests recover whole originals in one answer; pages are tested in tests/core/test_recover_pages.py.
WHOLE = ("--page-size", "100000000")


def _options(tmp_path: Path, *extra: str, recovery_dir: Path | None = None) -> list[str]:
    rec = recovery_dir or tmp_path / "rec"
    return [*WHOLE, "--budget", str(BUDGET), "--recovery-dir", str(rec), *extra]


Session = Callable[..., AbstractContextManager[RawClient]]


@pytest.fixture
def session(tmp_path: Path, wrap_door: Session) -> Session:
    """`session(*options, recovery_dir=...)`: an initialized wrap of the demo server with the budget and
    the options, over each of wrap's transports (conftest's `wrap_door`)."""

    @contextlib.contextmanager
    def opened(*extra: str, recovery_dir: Path | None = None) -> Iterator[RawClient]:
        with wrap_door(_options(tmp_path, *extra, recovery_dir=recovery_dir)) as client:
            client.initialize()
            yield client

    return opened


def _presented_chars(result: dict[str, Any]) -> int:
    return sum(len(b["text"]) for b in result["content"] if b["type"] == "text")


def test_a_large_json_object_keeps_its_keys_gains_truncation_and_recovers_byte_for_byte(
    tmp_path: Path, demo_direct: RawClient, session: Session
) -> None:
    original = demo_direct.call("search_issues", {"query": "object"})
    with session() as client:
        shrunk = client.call("search_issues", {"query": "object"})
        record = shrunk["_meta"]["truncation"]
        whole = client.call("squeeze_recover", {"response_id": record["response_id"]})
        one = client.call("squeeze_recover", {"response_id": record["response_id"], "pointer": "/issues/17"})
    assert _presented_chars(shrunk) <= BUDGET
    preview = json.loads(text(shrunk))
    full = json.loads(text(original))
    assert set(full) <= set(preview) and "truncation" in preview
    assert preview["truncation"]["response_id"] == record["response_id"]
    assert preview["truncation"]["report"]["pruned"] is True
    assert whole["content"] == original["content"]  # byte for byte
    assert json.loads(text(one)) == full["issues"][17]
    stored = Path(record["original_response_file"])
    assert json.loads(stored.read_bytes()) == original  # the complete CallToolResult, on disk
    assert stat.S_IMODE(stored.stat().st_mode) == 0o600
    assert stat.S_IMODE(stored.parent.stat().st_mode) == 0o700


def test_a_large_array_stays_an_array_with_meta_and_a_trailing_notice(
    tmp_path: Path, demo_direct: RawClient, session: Session
) -> None:
    original = demo_direct.call("list_rows", {"table": "t"})
    with session() as client:
        shrunk = client.call("list_rows", {"table": "t"})
        response_id = shrunk["_meta"]["truncation"]["response_id"]
        window = client.call("squeeze_recover", {"response_id": response_id, "offset": 100, "length": 500})
    assert _presented_chars(shrunk) <= BUDGET
    assert isinstance(json.loads(shrunk["content"][0]["text"]), list)
    assert len(shrunk["content"]) == 2 and response_id in shrunk["content"][1]["text"]
    assert text(window) == text(original)[100:600]


def test_sixty_kilobytes_of_prose_keeps_head_and_tail_with_a_marker(
    tmp_path: Path, demo_direct: RawClient, session: Session
) -> None:
    original = text(demo_direct.call("read_file", {"path": "x.md"}))
    with session() as client:
        shrunk = text(client.call("read_file", {"path": "x.md"}))
    assert len(original) > 50_000 and len(shrunk) <= BUDGET
    assert "[...truncated" in shrunk
    head = shrunk.split("[...truncated")[0]
    assert original.startswith(head.rstrip("\n")[:200])


def test_small_error_and_structured_results_pass_or_keep_structured_content(
    tmp_path: Path, demo_direct: RawClient, session: Session
) -> None:
    direct_small = demo_direct.call("echo", {"text": "tiny"})
    direct_error = demo_direct.call("fail", {"message": "x" * 30_000})
    direct_structured = demo_direct.call("big_structured", {})
    with session() as client:
        small = client.call("echo", {"text": "tiny"})
        error = client.call("fail", {"message": "x" * 30_000})
        structured = client.call("big_structured", {})
    assert small == direct_small
    assert error == direct_error  # errors are never shrunk
    assert structured["structuredContent"] == direct_structured["structuredContent"]
    assert _presented_chars(structured) <= BUDGET < _presented_chars(direct_structured)
    files = list((tmp_path / "rec").iterdir())
    assert len(files) == 1  # only the shrunk result stored an original


def test_full_meta_returns_the_unshrunk_result(
    tmp_path: Path, demo_direct: RawClient, session: Session
) -> None:
    original = demo_direct.call("read_file", {"path": "full.md"})
    with session() as client:
        full = client.result(
            "tools/call",
            {"name": "read_file", "arguments": {"path": "full.md"}, "_meta": {"mcpsqueeze/full": True}},
        )
    assert full == original


def test_memory_only_recovery_creates_no_files_and_unknown_ids_are_explicit_errors(
    tmp_path: Path, session: Session
) -> None:
    with session("--recovery", "memory") as client:
        shrunk = client.call("search_issues", {"query": "mem"})
        response_id = shrunk["_meta"]["truncation"]["response_id"]
        again = client.call("squeeze_recover", {"response_id": response_id})
        unknown = client.call("squeeze_recover", {"response_id": "0" * 32})
        malformed = client.call("squeeze_recover", {"response_id": "../../etc/passwd"})
    assert "original_response_file" not in shrunk["_meta"]["truncation"]
    assert not (tmp_path / "rec").exists() or not any((tmp_path / "rec").iterdir())
    assert len(text(again)) > 100_000
    assert unknown["isError"] is True and "0" * 32 in text(unknown)
    assert malformed["isError"] is True and "32 hex" in text(malformed)


def test_originals_survive_a_proxy_restart(tmp_path: Path, demo_direct: RawClient, session: Session) -> None:
    with session() as first:
        shrunk = first.call("read_file", {"path": "kept.md"})
    response_id = shrunk["_meta"]["truncation"]["response_id"]
    with session() as second:
        recovered = second.call("squeeze_recover", {"response_id": response_id})
    assert text(recovered) == text(demo_direct.call("read_file", {"path": "kept.md"}))


def test_the_recover_tool_gets_a_suffix_when_the_backend_already_has_that_name(tmp_path: Path) -> None:
    import sys

    backend = [
        sys.executable,
        str(Path(__file__).parents[1] / "fixtures" / "noisy_backend.py"),
        "--with-squeeze-recover",
    ]
    with MemoryWrap([*WHOLE, "--recovery-dir", str(tmp_path / "rec")], target=backend) as client:
        client.initialize()
        names = [t["name"] for t in client.result("tools/list")["tools"]]
        theirs = client.call("squeeze_recover", {"text": "the backend's own tool"})
        big = client.call("echo", {"text": "word " * 6000})
        ours = client.call("squeeze_recover_2", {"response_id": big["_meta"]["truncation"]["response_id"]})
    assert names == ["echo", "squeeze_recover", "squeeze_recover_2"]
    assert "squeeze_recover_2" in big["_meta"]["truncation"]["message"]
    assert text(ours) == "word " * 6000
    assert text(theirs) == "the backend's own tool"  # forwarded, not answered by the proxy


def test_wrap_sweeps_old_originals_of_its_directory_at_start(tmp_path: Path, session: Session) -> None:
    rec = tmp_path / "rec"
    rec.mkdir(mode=0o700)
    old = rec / ("mcpsqueeze-" + "a" * 32 + ".json")
    fresh = rec / ("mcpsqueeze-" + "b" * 32 + ".json")
    other = rec / "notes.txt"
    for path in (old, fresh, other):
        path.write_text("{}")
    os.utime(old, (1_000_000_000, 1_000_000_000))
    os.utime(other, (1_000_000_000, 1_000_000_000))
    with session("--retention", "1h") as client:
        client.call("echo", {"text": "x"})
        from rawclient import wait_for

        wait_for(lambda: not old.exists(), what="the retention sweep")
    assert fresh.exists() and other.exists()


def test_a_huge_result_being_condensed_does_not_stall_a_small_call(tmp_path: Path) -> None:
    import sys
    import time

    backend = [
        sys.executable,
        str(Path(__file__).parents[1] / "fixtures" / "noisy_backend.py"),
        "--with-squeeze-recover",
    ]
    with MemoryWrap([*WHOLE, "--recovery-dir", str(tmp_path / "rec")], target=backend) as client:
        client.initialize()
        client.send(
            {
                "jsonrpc": "2.0",
                "id": "big",
                "method": "tools/call",
                "params": {"name": "huge", "arguments": {}},
            }
        )
        client.send(
            {
                "jsonrpc": "2.0",
                "id": "small",
                "method": "tools/call",
                "params": {"name": "echo", "arguments": {"text": "hi"}},
            }
        )
        small = client.wait_response("small", timeout=60)
        small_at = time.monotonic()
        big = client.wait_response("big", timeout=120)
        big_at = time.monotonic()
    assert text(small["result"]) == "hi"
    assert big_at > small_at  # the small answer did not wait behind the 20 MB one
    assert len(text(big["result"])) <= 20_000
    assert big["result"]["_meta"]["truncation"]["report"]["original_chars"] > 19_000_000
