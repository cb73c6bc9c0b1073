"""--drop-duplicate-structured: opt-in, outputSchema hidden, originals recoverable; over each of wrap's
transports (in process), and against the public filesystem and memory servers (spawned, `slow`)."""

from __future__ import annotations

import json
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path

import pytest

from rawclient import RawClient, assert_golden, cli, require_node_paths, text

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


@pytest.mark.slow
def test_the_policy_key_drops_filesystem_and_memory_duplicates_for_the_named_tools(tmp_path: Path) -> None:
    paths = require_node_paths("NODE22", "FILESYSTEM_JS", "MEMORY_JS")
    root = tmp_path / "files"
    root.mkdir()
    (root / "a.txt").write_text("hello\n" * 20)
    config = tmp_path / "config.toml"
    config.write_text('[policies."read_text_file"]\ndrop_duplicate_structured = true\n')
    fs = [paths["NODE22"], paths["FILESYSTEM_JS"], str(root)]
    with RawClient(_wrap(tmp_path, fs, "--config", str(config))) as client:
        client.initialize()
        tools = {t["name"]: t for t in client.result("tools/list")["tools"]}
        read = client.call("read_text_file", {"path": str(root / "a.txt")})
        listed = client.call("list_directory", {"path": str(root)})
        back = client.call("squeeze_recover", {"response_id": read["_meta"]["truncation"]["response_id"]})
    assert "outputSchema" not in tools["read_text_file"] and "outputSchema" in tools["list_directory"]
    assert "structuredContent" not in read and text(read) == "hello\n" * 20
    assert "structuredContent" in listed  # no policy for this tool
    assert text(back) == "hello\n" * 20
    memory = [paths["NODE22"], paths["MEMORY_JS"]]
    env = {"MEMORY_FILE_PATH": str(tmp_path / "memory.jsonl")}
    with RawClient(_wrap(tmp_path, memory, "--drop-duplicate-structured"), env=env) as client:
        client.initialize()
        client.call(
            "create_entities", {"entities": [{"name": "a", "entityType": "t", "observations": ["x"]}]}
        )
        graph = client.call("read_graph", {})
    assert "structuredContent" not in graph
    assert json.loads(text(graph))["entities"][0]["name"] == "a"
