"""wrap in front of real public MCP servers (npm server-everything, -filesystem and -memory; PyPI
mcp-server-git and mcp-server-time), each spawned as a client would spawn it, and wrap too: parity with
the direct answers, dedup and shrinking, outline previews that recover by their lines, overlap dedup, the
replayed coding session through `--compress-tools`, `--drop-duplicate-structured` by policy, and the
server command's own options. All `slow` (public servers); the fast subset starts none."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from parity import CASES, ParityCase, run_parity

from mcpsqueeze._lines import split_lines
from mcpsqueeze.shrink import landmarks
from rawclient import ROOT, RawClient, cli, require_node_paths, text

sys.path.insert(0, str(ROOT))
from scripts.bench import replay as bs  # the session and its servers, as the benchmarks run them

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


# -- outline previews of real servers' results recover by their lines


FOLD = re.compile(r"^[ \t]*\[lines? (\d+)(?:-(\d+))? folded(?:: [^\]]*)?\]\n?\Z")


def _rebuild_by_recovering(client: RawClient, preview: str, response_id: str) -> str:
    """Each fold marker replaced by what squeeze_recover returns for its lines."""
    header, *body = split_lines(preview)
    assert header.startswith("[mcpsqueeze] Outline of ")
    out = []
    for line in body:
        match = FOLD.match(line)
        if match is None:
            out.append(line)
            continue
        lines = f"{match.group(1)}-{match.group(2) or match.group(1)}"
        got = client.call("squeeze_recover", {"response_id": response_id, "lines": lines})
        out.append(text(got))
    return "".join(out)


def _check_outline(got: dict[str, object], original: str, client: RawClient) -> None:
    preview = text(got)
    assert len(preview) <= 20_000 < len(original)
    shown = set(preview.split("\n"))
    marks = landmarks(original)
    assert marks and all(mark in shown for mark in marks)
    response_id = got["_meta"]["truncation"]["response_id"]  # type: ignore[index]
    assert _rebuild_by_recovering(client, preview, response_id) == original


def test_a_big_source_file_read_through_server_filesystem_is_an_outline_that_recovers_by_lines(
    tmp_path: Path,
) -> None:
    paths = require_node_paths("NODE22", "FILESYSTEM_JS")
    root = tmp_path / "files"
    root.mkdir()
    shrink = ROOT / "src" / "mcpsqueeze" / "shrink"
    source = (shrink / "_priced.py").read_text() + (shrink / "_limits.py").read_text()
    (root / "big.py").write_text(source)
    server = [paths["NODE22"], paths["FILESYSTEM_JS"], str(root)]
    with RawClient(_through(tmp_path, server)) as client:
        client.initialize()
        got = client.call("read_text_file", {"path": str(root / "big.py")})
        assert got["structuredContent"] == {"content": source}  # never modified
        _check_outline(got, source, client)


def test_a_long_git_log_through_mcp_server_git_keeps_every_commit_and_subject(tmp_path: Path) -> None:
    git_server = ROOT / ".cache" / "pyservers" / "bin" / "mcp-server-git"
    if not git_server.exists():
        pytest.skip("run scripts/install-test-deps.sh first (mcp-server-git)")
    repo = tmp_path / "repo"
    repo.mkdir()
    env = {"GIT_AUTHOR_NAME": "A", "GIT_AUTHOR_EMAIL": "a@example.invalid", "GIT_COMMITTER_NAME": "A"}
    env |= {"GIT_COMMITTER_EMAIL": "a@example.invalid", "HOME": str(tmp_path), "PATH": "/usr/bin:/bin"}
    subprocess.run(["git", "init", "-q", str(repo)], check=True, env=env)
    script = "".join(
        f"git commit -q --allow-empty -m 'Change {i}: adjust the parser for case {i}' "
        f"-m 'Longer body for change {i}, explaining why the parser needed it.' -m 'Refs #{i}'\n"
        for i in range(100)
    )
    subprocess.run(["sh", "-c", script], cwd=repo, check=True, env=env)
    server = [str(git_server), "--repository", str(repo)]
    with RawClient(server) as direct:
        direct.initialize()
        original = text(direct.call("git_log", {"repo_path": str(repo), "max_count": 100}))
    with RawClient(_through(tmp_path, server)) as client:
        client.initialize()
        got = client.call("git_log", {"repo_path": str(repo), "max_count": 100})
        _check_outline(got, original, client)


# -- overlap dedup: deltas shown, originals recovered exactly


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


# -- the replayed coding session through --compress-tools


SERVED = bs.SERVED  # the tree the session's file reads name


RID = re.compile(r"\b[0-9a-f]{32}\b")


# A pointer's "N tokens not resent" once the earlier result is counted, else "N characters not resent":
# counting is off the response path, so which one a pointer says depends on the machine's load.
NOT_RESENT = re.compile(r"\d+ (?:tokens|characters) not resent")


def _repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    subprocess.run(["git", "clone", "-q", "--no-hardlinks", str(ROOT), str(repo)], check=True)
    subprocess.run(["git", "-C", str(repo), "checkout", "-q", "-B", "bench", SERVED], check=True)
    return repo


def _run(
    tmp_path: Path, repo: Path, index: int, flags: tuple[str, ...] | None
) -> tuple[list[dict[str, Any]], dict[str, RawClient]]:
    """The session through `wrap FLAGS` (None: direct); the answers, and the clients (still open)."""
    clients: dict[str, RawClient] = {}
    for server in bs.servers(repo, tmp_path, index):
        argv = list(server.argv)
        if flags is not None:
            rec = tmp_path / "rec"  # one directory for both: the notices name the same paths
            argv = cli(
                "wrap",
                "--name",
                server.name,
                "--recovery-dir",
                str(rec),
                "--page-size",
                "100000000",
                *flags,
                "--",
                *argv,
            )
        clients[server.name] = client = RawClient(argv, env=server.env)
        client.initialize()
    answers = []
    compact = flags is not None and "--compress-tools" in flags
    for name, tool, args in bs.session(repo):
        if compact:
            params = {"name": f"{name}_invoke_tool", "arguments": {"tool_name": tool, "tool_input": args}}
        else:
            params = {"name": tool, "arguments": args}
        answers.append(clients[name].request("tools/call", params, timeout=120))
    return answers, clients


def _numbered(values: list[Any]) -> list[str]:
    seen: dict[str, str] = {}
    numbered = [
        RID.sub(lambda m: seen.setdefault(m.group(0), f"<id{len(seen)}>"), json.dumps(v)) for v in values
    ]
    return [NOT_RESENT.sub("<n> not resent", text) for text in numbered]


def _recoveries(answers: list[dict[str, Any]], clients: dict[str, RawClient], repo: Path) -> list[Any]:
    """squeeze_recover of every response id a result names, in order."""
    out = []
    for (name, _, _), answer in zip(bs.session(repo), answers, strict=True):
        for rid in dict.fromkeys(RID.findall(json.dumps(answer.get("result", {}).get("_meta", {})))):
            out.append(clients[name].call("squeeze_recover", {"response_id": rid}))
    return out


@pytest.mark.timeout(600)
def test_the_replayed_session_through_invoke_equals_plain_wrap_and_full_equals_direct(tmp_path: Path) -> None:
    require_node_paths("NODE22", "FILESYSTEM_JS", "MEMORY_JS")
    if not (ROOT / ".cache" / "pyservers" / "bin" / "mcp-server-git").exists():
        pytest.skip("run scripts/install-test-deps.sh first (mcp-server-git)")
    repo = _repo(tmp_path)
    direct, clients = _run(tmp_path, repo, 0, None)
    for client in clients.values():
        client.close()
    plain, plain_clients = _run(tmp_path, repo, 1, ())
    compact, compact_clients = _run(tmp_path, repo, 2, ("--compress-tools", "medium"))
    try:
        assert len(compact) == 39
        assert all("result" in a for a in compact), [a for a in compact if "result" not in a][:1]
        mine, theirs = _numbered([a["result"] for a in compact]), _numbered([a["result"] for a in plain])
        assert mine == theirs
        changed = [
            i for i, (a, d) in enumerate(zip(compact, direct, strict=True)) if a["result"] != d["result"]
        ]
        assert len(changed) >= 10  # the session shrinks and deduplicates: the comparison means something
        recovered = _recoveries(compact, compact_clients, repo)
        assert recovered and recovered == _recoveries(plain, plain_clients, repo)
        session = bs.session(repo)
        memory = tmp_path / "memory-2.jsonl"  # the compact run's knowledge graph (replay.servers)
        graph = memory.read_bytes()
        for i in changed:  # the memory server's writes too: answered from the store, never run again
            name, tool, args = session[i]
            arguments = {"tool_name": tool, "tool_input": args, "full": True}
            full = compact_clients[name].request(
                "tools/call", {"name": f"{name}_invoke_tool", "arguments": arguments}
            )
            assert json.dumps(full["result"]) == json.dumps(direct[i]["result"]), (i, tool)
        assert memory.read_bytes() == graph
        assert any(session[i][0] == "memory" for i in changed)
    finally:
        for client in (*plain_clients.values(), *compact_clients.values()):
            client.close()


# -- --drop-duplicate-structured by policy


WHOLE = ("--page-size", "100000000")  # the whole original in one answer


def test_the_policy_key_drops_filesystem_and_memory_duplicates_for_the_named_tools(tmp_path: Path) -> None:
    paths = require_node_paths("NODE22", "FILESYSTEM_JS", "MEMORY_JS")
    root = tmp_path / "files"
    root.mkdir()
    (root / "a.txt").write_text("hello\n" * 20)
    config = tmp_path / "config.toml"
    config.write_text('[policies."read_text_file"]\ndrop_duplicate_structured = true\n')
    fs = [paths["NODE22"], paths["FILESYSTEM_JS"], str(root)]
    with RawClient(_through(tmp_path, fs, *WHOLE, "--config", str(config))) as client:
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
    with RawClient(_through(tmp_path, memory, *WHOLE, "--drop-duplicate-structured"), env=env) as client:
        client.initialize()
        client.call(
            "create_entities", {"entities": [{"name": "a", "entityType": "t", "observations": ["x"]}]}
        )
        graph = client.call("read_graph", {})
    assert "structuredContent" not in graph
    assert json.loads(text(graph))["entities"][0]["name"] == "a"


# -- wrap's command line before a real server's own options


def test_the_server_command_starts_at_the_first_argument_and_keeps_its_own_flags_without_a_separator(
    tmp_path: Path,
) -> None:
    paths = require_node_paths("PY_SERVERS_BIN")
    repo = tmp_path / "repo"
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    git_server = str(Path(paths["PY_SERVERS_BIN"]) / "mcp-server-git")
    # No `--`: `--repository` is the server's (wrap has no such option) and must reach it untouched.
    argv = cli("wrap", "--recovery-dir", str(tmp_path / "rec"), git_server, "--repository", str(repo))
    with RawClient(argv) as client:
        client.initialize()
        status = client.call("git_status", {"repo_path": str(repo)})
        assert client.close() == 0
    assert "No such option" not in client.stderr
    assert status.get("isError") is not True
    assert "branch" in text(status).lower()
