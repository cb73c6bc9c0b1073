"""Overlap dedup through the real CLI against real npm servers: deltas shown, originals recovered exactly."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from rawclient import RawClient, cli, require_node_paths, text

pytestmark = pytest.mark.slow


def _through(tmp_path: Path, server: list[str], *extra: str) -> list[str]:
    return cli("wrap", "--recovery-dir", str(tmp_path / "rec"), *extra, "--", *server)


def _recover(client: RawClient, got: dict[str, Any]) -> dict[str, Any]:
    rid = got["_meta"]["truncation"]["response_id"]
    return client.call("squeeze_recover", {"response_id": rid})


def test_a_file_re_read_after_a_small_edit_is_shown_as_a_diff_and_recovers_exactly(tmp_path: Path) -> None:
    paths = require_node_paths("NODE22", "FILESYSTEM_JS")
    root = tmp_path / "files"
    root.mkdir()
    source = root / "module.py"
    source.write_text("".join(f"def f{i}(x):\n    return x + {i}\n" for i in range(300)))
    server = [paths["NODE22"], paths["FILESYSTEM_JS"], str(root)]
    with RawClient(_through(tmp_path, server)) as client:
        client.initialize()
        first = client.call("read_text_file", {"path": str(source)})
        source.write_text(source.read_text().replace("return x + 42\n", "return x - 42\n"))
        second = client.call("read_text_file", {"path": str(source)})
        recovered = _recover(client, second)
        client.call("list_directory", {"path": str(root)})  # another tool between: still diffed by tool
        third = client.call("read_text_file", {"path": str(source)})
    with RawClient(server) as direct:
        direct.initialize()
        expected = direct.call("read_text_file", {"path": str(source)})
    assert "largely the same" not in text(first)
    assert text(second).startswith("[mcpsqueeze] largely the same as the result of call #1 (read_text_file)")
    assert "-    return x + 42\n+    return x - 42\n" in text(second)
    assert len(text(second)) < len(text(first)) / 5
    assert second["structuredContent"] == expected["structuredContent"]  # never modified
    assert second["_meta"]["mcpsqueeze/dedup"]["overlaps_call"] == 1
    assert Path(second["_meta"]["truncation"]["original_response_file"]).is_file()
    assert recovered["content"] == expected["content"]  # byte for byte
    assert text(third).startswith("[mcpsqueeze] identical to the result of call #2")


def test_a_memory_graph_read_again_after_one_observation_shows_that_change(tmp_path: Path) -> None:
    paths = require_node_paths("NODE22", "MEMORY_JS")
    server = [paths["NODE22"], paths["MEMORY_JS"]]
    env = {"MEMORY_FILE_PATH": str(tmp_path / "memory.jsonl")}
    entities = [
        {"name": f"person{i}", "entityType": "person", "observations": [f"likes topic {i}", "writes code"]}
        for i in range(40)
    ]
    with RawClient(_through(tmp_path, server), env=env) as client:
        client.initialize()
        client.call("create_entities", {"entities": entities})
        first = client.call("read_graph", {})
        client.call("add_observations", {"observations": [{"entityName": "person7", "contents": ["new"]}]})
        second = client.call("read_graph", {})
        recovered = _recover(client, second)
    assert "largely the same" not in text(first)
    assert "largely the same as the result of call #2 (read_graph)" in text(second)
    delta = json.loads(second["content"][1]["text"])
    assert delta["added"] == [{"path": "/entities/7/observations/2", "value": "new"}]
    graph = json.loads(text(recovered))
    assert graph["entities"][7]["observations"] == ["likes topic 7", "writes code", "new"]
    assert recovered["content"][0]["text"] != text(first)


def test_per_tool_dedup_false_also_turns_overlap_off(tmp_path: Path) -> None:
    paths = require_node_paths("NODE22", "FILESYSTEM_JS")
    root = tmp_path / "files"
    root.mkdir()
    source = root / "a.txt"
    source.write_text("".join(f"line {i}\n" for i in range(500)))
    config = tmp_path / "config.toml"
    config.write_text('[policies."read_text_file"]\ndedup = false\n')
    server = [paths["NODE22"], paths["FILESYSTEM_JS"], str(root)]
    with RawClient(_through(tmp_path, server, "--config", str(config))) as client:
        client.initialize()
        client.call("read_text_file", {"path": str(source)})
        source.write_text(source.read_text() + "one more\n")
        second = client.call("read_text_file", {"path": str(source)})
    assert text(second) == source.read_text()


def test_a_longer_git_log_after_a_shrunk_shorter_one_shows_the_older_commits_and_names_both_recoveries(
    tmp_path: Path,
) -> None:
    paths = require_node_paths("PY_SERVERS_BIN")
    repo = tmp_path / "repo"
    repo.mkdir()
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.com"]
    subprocess.run([*git[:3], "init", "-q"], check=True)
    for i in range(130):
        (repo / "f.txt").write_text(f"{i}\n")
        subprocess.run([*git, "add", "f.txt"], check=True)
        subprocess.run([*git, "commit", "-qm", f"change number {i}"], check=True)
    server = [str(Path(paths["PY_SERVERS_BIN"]) / "mcp-server-git"), "--repository", str(repo)]
    with RawClient(_through(tmp_path, server, "--budget", "8000")) as client:
        client.initialize()
        short = client.call("git_log", {"repo_path": str(repo), "max_count": 100})
        long = client.call("git_log", {"repo_path": str(repo), "max_count": 130})
        back = _recover(client, long)
        base_id = long["_meta"]["mcpsqueeze/dedup"]["overlaps_response_id"]
        base = client.call("squeeze_recover", {"response_id": base_id})
    with RawClient(server) as direct:
        direct.initialize()
        expected = direct.call("git_log", {"repo_path": str(repo), "max_count": 130})
    assert "truncation" in short["_meta"]  # over the budget: shrunk
    message = text(long).split("\n")[0]
    assert message.startswith("[mcpsqueeze] largely the same as the result of call #1 (git_log)")
    assert "Call #1's result was shown shrunk" in message
    diff = long["content"][1]["text"]
    added = "\n".join(ln for ln in diff.splitlines()[2:] if ln.startswith("+"))
    assert [f"change number {i}\n" in added + "\n" for i in (0, 29, 30, 129)] == [True, True, False, False]
    assert not [ln for ln in diff.splitlines()[2:] if ln.startswith("-")]
    assert back["content"] == expected["content"]
    assert "change number 30" in text(base) and "change number 29" not in text(base)
