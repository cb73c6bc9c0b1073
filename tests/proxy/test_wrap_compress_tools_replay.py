"""Issue 22's must-show: the 39 calls of the replayed coding session (scripts/bench/replay.py, against the
real filesystem, git and memory servers) made through `<server>_invoke_tool` return exactly what the same
calls return through `wrap` without the mode (previews, dedup pointers, recoveries; response ids aside, as
they are random), and `full=true` returns the direct result byte for byte, the memory server's writes
included, without running any of them again.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from rawclient import ROOT, RawClient, cli, require_node_paths

sys.path.insert(0, str(ROOT))
from scripts.bench import replay as bs  # the session and its servers, as the benchmarks run them

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


@pytest.mark.slow  # three real public servers (npm filesystem and memory, PyPI git), 39 calls x 3 runs
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
