"""Parity against real public MCP servers (npm and PyPI), directly versus through `mcpsqueeze wrap`."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from parity import CASES, ParityCase, run_parity

from rawclient import RawClient, cli, require_node_paths, text

pytestmark = pytest.mark.slow


def _everything() -> list[str]:
    paths = require_node_paths("NODE22", "EVERYTHING_JS")
    return [paths["NODE22"], paths["EVERYTHING_JS"], "stdio"]


def _through(tmp_path: Path, server: list[str], *extra: str) -> list[str]:
    return cli("wrap", "--recovery-dir", str(tmp_path / "rec"), *extra, "--", *server)


PUBLIC = [case for case in CASES if case.name != "demo"]


@pytest.mark.parametrize("case", PUBLIC, ids=[case.name for case in PUBLIC])
def test_a_small_exchange_is_identical_directly_and_through_wrap(case: ParityCase, tmp_path: Path) -> None:
    """The parity fixture's cases (everything is the richest: structured content, images, resources,
    prompts, errors)."""
    argv = case.argv()
    if argv is None:
        message = f"the {case.name} server is not installed here (scripts/install-test-deps.sh)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    code, stderr = run_parity(case, argv, tmp_path / "rec")
    assert code == 0
    assert "mcpsqueeze session summary:" in stderr


def test_server_everything_repeated_large_echo_is_deduplicated_and_shrunk(tmp_path: Path) -> None:
    message = json.dumps({"rows": [{"id": i, "name": f"row {i}", "tags": ["a", "b"]} for i in range(4000)]})
    with RawClient(_through(tmp_path, _everything())) as client:
        client.initialize()
        first = client.call("echo", {"message": message})
        second = client.call("echo", {"message": message})
        recovered = client.recover_whole({"response_id": first["_meta"]["truncation"]["response_id"]})
        code = client.close()
    assert len(text(first)) <= 20_000 < len(message)
    assert "identical to the result of call #1 (echo)" in text(second)
    assert recovered == "Echo: " + message
    assert code == 0
    assert "deduplicated     1" in client.stderr and "shrunk           1" in client.stderr


def test_server_filesystem_results_sent_twice_keep_structured_content_intact(tmp_path: Path) -> None:
    paths = require_node_paths("NODE22", "FILESYSTEM_JS")
    root = tmp_path / "files"
    root.mkdir()
    (root / "big.txt").write_text("line of text\n" * 6000)
    server = [paths["NODE22"], paths["FILESYSTEM_JS"], str(root)]
    with RawClient(server) as direct:
        direct.initialize()
        expected_tools = direct.result("tools/list")["tools"]
        expected = direct.call("read_text_file", {"path": str(root / "big.txt")})
    with RawClient(_through(tmp_path, server)) as client:
        client.initialize()
        tools = [t for t in client.result("tools/list")["tools"] if t["name"] != "squeeze_recover"]
        got = client.call("read_text_file", {"path": str(root / "big.txt")})
    assert tools == expected_tools
    assert got["structuredContent"] == expected["structuredContent"]  # never modified
    assert len(text(got)) <= 20_000 < len(text(expected))
    assert "[lines 2-6000 folded: the line above 5999 more times]" in text(got)  # repeats collapse
