"""What the model sees: the real Claude Code and Codex CLIs, run offline against a scripted model on
loopback (tests/fake_models.py), with MCP servers directly and through `mcpsqueeze wrap`.

Directly, each CLI hands its model the compact JSON of a result's structuredContent and drops its text
(the harness itself, proven on a marker server), and does not keep a large file read whole. Through `wrap`, a large file read from server-filesystem
and a large JSON answer from server-memory (both repeat their text as structuredContent) must reach the
model as our preview with its recovery hint, within what the client keeps: Claude Code saves a result over
50,000 characters to a file instead; Codex keeps 12,000 bytes of a result for a model outside its list
and cuts the middle of anything longer.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from fake_models import MessagesApi, ResponsesApi, claude_code, codex
from rawclient import cli, require_node_paths

# The real CLIs and the public MCP servers from npm (scripts/install-test-deps.sh).
pytestmark = pytest.mark.slow

MARKER = [sys.executable, str(Path(__file__).parents[1] / "fixtures" / "marker_server.py")]
CLAUDE_CODE_KEEPS = 50_000  # characters: a longer result is saved to a file, the model reads about it
CODEX_KEEPS = 12_000  # bytes of one tool output, for a model outside Codex's list (10,000 x 1.2)
HINT = re.compile(r"squeeze_recover.{0,40}[0-9a-f]{32}", re.S)
CLAUDE_CODE_SAVED = re.compile(r"<persisted-output>|output saved to", re.I)
CODEX_HEADER = re.compile(r"\AWall time: [0-9.]+ seconds\nOutput:\n?")
CODEX_CUT = re.compile(r"\d+ (tokens|chars|bytes) truncated")


def server(argv: list[str], env: dict[str, str] | None = None) -> dict[str, Any]:
    return {"command": argv[0], "args": argv[1:], **({"env": env} if env else {})}


def through_wrap(tmp_path: Path, target: list[str]) -> list[str]:
    return cli("wrap", "--recovery-dir", str(tmp_path / "rec"), "--", *target)


def kept_by_claude_code(seen: str) -> bool:
    """Not saved to a file (the model then reads a notice naming the file, and a 2 KB head at most)."""
    return len(seen) < CLAUDE_CODE_KEEPS and not CLAUDE_CODE_SAVED.search(seen)


def kept_by_codex(seen: str) -> bool:
    output = CODEX_HEADER.sub("", seen, count=1)  # the tool's output, after Codex's own line about it
    return len(output.encode()) <= CODEX_KEEPS and not CODEX_CUT.search(output)


@dataclass(frozen=True)
class Cli:
    """One agent CLI: how to run it against its scripted model, and whether it kept a result whole."""

    name: str
    api: type[MessagesApi] | type[ResponsesApi]
    run: Callable[..., subprocess.CompletedProcess[str]]
    kept_whole: Callable[[str], bool]

    def seen(self, tmp_path: Path, servers: dict[str, Any], tool: str, arguments: dict[str, Any],
             cwd: Path | None = None) -> str:  # fmt: skip
        """What the CLI handed its model for one call of `tool`."""
        with self.api(tool, arguments) as api:
            done = self.run(api, servers, tmp_path / self.name, cwd=cwd)
            assert done.returncode == 0, done.stderr[-2000:]
            return str(api.tool_result)

    def check_our_preview(self, seen: str) -> None:
        """Our preview with how to recover, whole in what the model reads: nothing the CLI had to cut."""
        assert HINT.search(seen) and self.kept_whole(seen), seen[:2000]


CLIS = [
    Cli("claude-code", MessagesApi, claude_code, kept_by_claude_code),
    Cli("codex", ResponsesApi, codex, kept_by_codex),
]
each_cli = pytest.mark.parametrize("agent", CLIS, ids=[c.name for c in CLIS])


@each_cli
def test_the_cli_hands_its_model_the_structured_content_and_drops_the_text(
    tmp_path: Path, agent: Cli
) -> None:
    seen = agent.seen(tmp_path, {"s": server(MARKER)}, "mcp__s__marker", {})
    assert '{"marker":"STRUCT-MARKER"}' in seen and "CONTENT-MARKER" not in seen


def large_file(tmp_path: Path) -> Path:
    """A 150 KB source file (far over both clients' limits), alone in its directory."""
    root = tmp_path / "files"
    root.mkdir()
    lines = [
        f"def handler_{i}(request):  # route {i}\n    return respond(request, status={200 + i % 7})\n"
        for i in range(2500)
    ]
    (root / "handlers.py").write_text("".join(lines))
    return root / "handlers.py"


def read_file_as_seen(tmp_path: Path, agent: Cli, wrapped: bool) -> str:
    """What `agent`'s model reads of server-filesystem's answer to reading `large_file`."""
    paths = require_node_paths("NODE22", "FILESYSTEM_JS")
    path = large_file(tmp_path)
    target = [paths["NODE22"], paths["FILESYSTEM_JS"], str(path.parent)]
    fs = {"fs": server(through_wrap(tmp_path, target) if wrapped else target)}
    # the CLI works in the file's directory: that is the root it offers, and server-filesystem serves no other
    seen = agent.seen(tmp_path, fs, "mcp__fs__read_text_file", {"path": str(path)}, cwd=path.parent)
    assert "def handler_0(request)" in seen  # the file's own text
    return seen


@each_cli
def test_a_large_file_read_directly_is_not_kept_whole_by_the_cli(tmp_path: Path, agent: Cli) -> None:
    seen = read_file_as_seen(tmp_path, agent, wrapped=False)
    assert not agent.kept_whole(seen) and not HINT.search(seen)


@each_cli
def test_a_large_file_read_through_wrap_reaches_the_model_as_our_preview(tmp_path: Path, agent: Cli) -> None:
    agent.check_our_preview(read_file_as_seen(tmp_path, agent, wrapped=True))


@each_cli
def test_a_large_json_answer_through_wrap_reaches_the_model_as_our_preview(
    tmp_path: Path, agent: Cli
) -> None:
    paths = require_node_paths("NODE22", "MEMORY_JS")
    graph = tmp_path / "memory.jsonl"  # a knowledge graph whose read_graph answer is about 120 KB of JSON
    with graph.open("w") as out:
        for i in range(600):
            observations = [f"owned by team {i % 17}", f"deployed in region {i % 5}", "uses the shared cache"]
            out.write(json.dumps({"type": "entity", "name": f"service-{i}", "entityType": "service",
                                  "observations": observations}) + "\n")  # fmt: skip
            if i:
                out.write(json.dumps({"type": "relation", "from": f"service-{i}", "to": f"service-{i - 1}",
                                      "relationType": "calls"}) + "\n")  # fmt: skip
    memory = {"memory": server(through_wrap(tmp_path, [paths["NODE22"], paths["MEMORY_JS"]]),
                               {"MEMORY_FILE_PATH": str(graph)})}  # fmt: skip
    seen = agent.seen(tmp_path, memory, "mcp__memory__read_graph", {})
    assert "service-0" in seen  # the graph's own data, previewed
    agent.check_our_preview(seen)
