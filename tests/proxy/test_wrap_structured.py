"""--drop-duplicate-structured: opt-in, outputSchema hidden, originals recoverable; over each of wrap's
transports, in process (by policy against the public filesystem and memory servers:
test_public_servers.py)."""

from __future__ import annotations

import json
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path

from rawclient import RawClient, assert_golden, cli, text

GOLDEN = Path(__file__).with_name("golden")

# These tests recover whole originals in one answer; pages are tested in tests/core/test_recover_pages.py.
WHOLE = ("--page-size", "100000000")


def _wrap(tmp_path: Path, server: list[str], *extra: str) -> list[str]:
    return cli("wrap", *WHOLE, "--recovery-dir", str(tmp_path / "rec"), *extra, "--", *server)


def test_by_default_structured_content_and_output_schemas_are_never_modified(
    tmp_path: Path, wrap_door: Callable[..., AbstractContextManager[RawClient]]
) -> None:
    with wrap_door([*WHOLE, "--recovery-dir", str(tmp_path / "rec")]) as client:
        client.initialize()
        tools = {t["name"]: t for t in client.result("tools/list")["tools"]}
        small = client.call("add", {"a": 2, "b": 3})
    assert "outputSchema" in tools["add"] and "outputSchema" in tools["big_structured"]
    assert small["structuredContent"] == json.loads(text(small))


def test_the_option_drops_duplicates_hides_schemas_and_recovers_the_original(
    tmp_path: Path, demo_direct: RawClient, wrap_door: Callable[..., AbstractContextManager[RawClient]]
) -> None:
    expected_small = demo_direct.call("add", {"a": 2, "b": 3})
    expected_big = demo_direct.call("big_structured", {"n": 300})
    with wrap_door(
        [*WHOLE, "--recovery-dir", str(tmp_path / "rec"), "--drop-duplicate-structured"]
    ) as client:
        client.initialize()
        tools = {t["name"]: t for t in client.result("tools/list")["tools"]}
        small = client.call("add", {"a": 2, "b": 3})
        big = client.call("big_structured", {"n": 300})
        small_back = client.call(
            "squeeze_recover", {"response_id": small["_meta"]["truncation"]["response_id"]}
        )
        big_back = client.call("squeeze_recover", {"response_id": big["_meta"]["truncation"]["response_id"]})
    assert not [name for name, tool in tools.items() if "outputSchema" in tool]
    assert "structuredContent" not in small and "structuredContent" not in big
    assert text(small) == text(expected_small)  # the text itself is untouched
    assert small["_meta"]["truncation"]["structured_content_dropped"] is True
    message = small["_meta"]["truncation"]["message"].replace(
        small["_meta"]["truncation"]["response_id"], "RID"
    )
    assert_golden(GOLDEN / "structured_dropped_message.txt", message + "\n")
    assert big["_meta"]["truncation"]["structured_content_dropped"] is True  # shrunk too
    assert small_back["content"] == expected_small["content"]
    assert big_back["content"] == expected_big["content"]
    stored = json.loads(Path(big["_meta"]["truncation"]["original_response_file"]).read_text())
    assert stored["structuredContent"] == expected_big["structuredContent"]
