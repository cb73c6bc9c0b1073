"""The replayed coding session: 39 calls of an agent to three real public servers, and the routes it
takes to them (directly, or through one proxy per server).

The servers are npm ``server-filesystem`` and ``server-memory`` and PyPI ``mcp-server-git`` (installed
by scripts/install-test-deps.sh), over a clone of this repository checked out at ``SERVED``: the calls
read its files and history (file reads, trees, searches, git log/diff/show/status, memory writes and
reads, four repeats), so the figures move only when that commit does. An agent spawns its servers
together, initializes them, lists their tools, reads the listing (``pause``) and then calls.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ._harness import ROOT, Peer, Tree, cached_bin, node_paths, text_of

#: The commit whose tree the session reads (the paths its calls name are that tree's).
SERVED = "b215b84"
ANCHOR = "MCPSQUEEZE_BENCH_MCPC"  # mcp-compressor 0.38.2's executable, else .cache/mcpc/bin/
TOOLTRIM = "MCPSQUEEZE_BENCH_TOOLTRIM"  # tooltrim 0.3.3's, else .cache/tooltrim/bin/
BUDGET = 20000  # mcp-compressor's default --shrinkfit and our default budget


@dataclass(frozen=True)
class Server:
    name: str
    argv: tuple[str, ...]
    env: dict[str, str] = field(default_factory=dict)


def servers(repo: Path, workdir: Path, index: int) -> list[Server]:
    """The three servers over ``repo``; ``index`` gives each route its own memory graph, so every route
    sees the same sequence of states."""
    paths = node_paths()
    node = paths["NODE22"]
    memory = {"MEMORY_FILE_PATH": str(workdir / f"memory-{index}.jsonl")}
    return [
        Server("fs", (node, paths["FILESYSTEM_JS"], str(repo))),
        Server("git", (f"{paths['PY_SERVERS_BIN']}/mcp-server-git", "--repository", str(repo))),
        Server("memory", (node, paths["MEMORY_JS"]), memory),
    ]


def session(repo: Path) -> list[tuple[str, str, dict[str, Any]]]:
    """The calls, in order: (server, tool, arguments)."""
    r = str(repo)
    src = f"{r}/src/mcpsqueeze"
    entities = [
        {"name": "mcpsqueeze", "entityType": "project", "observations": ["an MCP proxy", "Python 3.11+"]},
        {"name": "relay", "entityType": "module", "observations": ["proxy/_relay.py", "message for message"]},
        {"name": "shrink", "entityType": "module", "observations": ["condense engine", "pure"]},
    ]
    relations = [
        {"from": "mcpsqueeze", "to": "relay", "relationType": "contains"},
        {"from": "mcpsqueeze", "to": "shrink", "relationType": "contains"},
    ]
    return [
        ("fs", "list_allowed_directories", {}),
        ("fs", "directory_tree", {"path": r, "excludePatterns": [".git", ".cache", ".venv"]}),
        ("git", "git_status", {"repo_path": r}),
        ("git", "git_log", {"repo_path": r, "max_count": 30}),
        ("fs", "read_text_file", {"path": f"{r}/README.md"}),
        ("fs", "read_text_file", {"path": f"{src}/proxy/_relay.py"}),
        ("fs", "read_text_file", {"path": f"{src}/pipeline.py"}),
        ("memory", "create_entities", {"entities": entities}),
        ("memory", "create_relations", {"relations": relations}),
        (
            "fs",
            "search_files",
            {"path": r, "pattern": "**/*.py", "excludePatterns": [".git/**", ".cache/**"]},
        ),
        ("fs", "read_text_file", {"path": f"{src}/shrink/_priced.py"}),
        ("fs", "list_directory", {"path": f"{src}/shrink"}),
        ("git", "git_show", {"repo_path": r, "revision": "HEAD~3"}),
        ("git", "git_diff", {"repo_path": r, "target": "HEAD~10"}),
        ("fs", "read_text_file", {"path": f"{src}/stages.py"}),
        (
            "memory",
            "add_observations",
            {"observations": [{"entityName": "relay", "contents": ["ids mapped"]}]},
        ),
        ("memory", "read_graph", {}),
        ("fs", "get_file_info", {"path": f"{src}/cli.py"}),
        ("fs", "read_text_file", {"path": f"{src}/cli.py"}),
        ("git", "git_log", {"repo_path": r, "max_count": 30}),  # repeat
        ("fs", "read_text_file", {"path": f"{src}/proxy/_relay.py"}),  # repeat
        ("git", "git_branch", {"repo_path": r, "branch_type": "all"}),
        ("fs", "read_multiple_files", {"paths": [f"{src}/tokens.py", f"{src}/stats.py", f"{src}/dedup.py"]}),
        ("memory", "search_nodes", {"query": "module"}),
        ("git", "git_show", {"repo_path": r, "revision": "HEAD"}),
        ("fs", "directory_tree", {"path": f"{r}/tests", "excludePatterns": ["__pycache__"]}),
        ("fs", "read_text_file", {"path": f"{r}/tests/rawclient.py"}),
        ("git", "git_diff", {"repo_path": r, "target": "HEAD~1"}),
        ("memory", "open_nodes", {"names": ["relay", "shrink"]}),
        ("fs", "read_text_file", {"path": f"{src}/shrink/_engine.py", "head": 80}),
        ("fs", "list_directory_with_sizes", {"path": src, "sortBy": "size"}),
        ("git", "git_status", {"repo_path": r}),  # repeat
        ("fs", "read_text_file", {"path": f"{src}/recovery/_memory.py"}),
        (
            "memory",
            "add_observations",
            {"observations": [{"entityName": "shrink", "contents": ["fast now"]}]},
        ),
        ("memory", "read_graph", {}),
        ("fs", "search_files", {"path": f"{r}/tests", "pattern": "**/test_*.py"}),
        ("git", "git_log", {"repo_path": r, "max_count": 5}),
        ("fs", "read_text_file", {"path": f"{r}/pyproject.toml"}),
        ("fs", "read_text_file", {"path": f"{src}/pipeline.py"}),  # repeat
    ]


def served_repo(workdir: Path, rev: str = SERVED) -> Path:
    """A clone of this repository under ``workdir``, checked out at ``rev``."""
    repo = workdir / "repo"
    if not repo.exists():
        subprocess.run(["git", "clone", "-q", "--no-hardlinks", str(ROOT), str(repo)], check=True)
    subprocess.run(["git", "-C", str(repo), "checkout", "-q", "-B", "bench", rev], check=True)
    return repo


# -- routes --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Route:
    """How the agent reaches each server: ``argv(server, workdir)`` is what it spawns."""

    name: str
    argv: Callable[[Server, Path], list[str]]
    env: dict[str, str] = field(default_factory=dict)
    wrapped: bool = False  # the tools sit behind `<server>_invoke_tool` (mcp-compressor's standard mode)
    ours: bool = False
    needs: str | None = None  # the executable it runs, when that may not be installed

    @property
    def available(self) -> bool:
        return self.needs is None or Path(self.needs).exists()

    def call(self, server: str, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """The ``tools/call`` params of calling ``tool`` this way."""
        if self.wrapped:
            return {
                "name": f"{server}_invoke_tool",
                "arguments": {"tool_name": tool, "tool_input": arguments},
            }
        return {"name": tool, "arguments": arguments}


def direct() -> Route:
    return Route("direct", lambda s, _w: list(s.argv))


def anchor(level: str | None = None) -> Route:
    """mcp-compressor at its default budget (``level``: its listing level, ``-c``)."""
    binary = str(cached_bin(ANCHOR, "mcpc", "bin", "mcp-compressor"))
    levels = [] if level is None else ["-c", level]
    return Route(
        f"mcp-compressor --shrinkfit={BUDGET}" + (f" -c {level}" if level else ""),
        lambda s, _w: [binary, f"--shrinkfit={BUDGET}", *levels, "-n", s.name, "--", *s.argv],
        wrapped=True,
        needs=binary,
    )


def tooltrim(max_tokens: int | None = None) -> Route:
    """tooltrim's proxy (its default, 512 of its tokens, or ``max_tokens``); it starts the backend with a
    minimal environment, so the memory server's variables go through an ``env`` prefix."""
    binary = str(cached_bin(TOOLTRIM, "tooltrim", "bin", "tooltrim"))
    limit = [] if max_tokens is None else ["--max-tokens", str(max_tokens)]

    def argv(server: Server, _workdir: Path) -> list[str]:
        env = ["env", *(f"{k}={v}" for k, v in server.env.items())] if server.env else []
        return [binary, "mcp", *limit, "--", *env, *server.argv]

    return Route(f"tooltrim mcp --max-tokens {max_tokens or 512}", argv, needs=binary)


def ours(tree: Tree, *flags: str) -> Route:
    """``mcpsqueeze wrap`` from ``tree`` at its defaults (plus ``flags``); its originals under the run's
    directory."""
    name = f"mcpsqueeze wrap ({tree.label})" + (f" {' '.join(flags)}" if flags else "")
    slug = "".join(c if c.isalnum() else "-" for c in name)

    def argv(server: Server, workdir: Path) -> list[str]:
        place = ["--name", server.name, "--recovery-dir", str(workdir / f"recovery-{slug}")]
        return tree.mcpsqueeze("wrap", *flags, *place, "--", *server.argv)

    return Route(name, argv, tree.env(), ours=True)


# -- one replay ----------------------------------------------------------------------------------------------


@dataclass
class Call:
    index: int  # position in the session
    server: str
    tool: str
    arguments: dict[str, Any]
    seconds: float
    first: bool  # the first call to its server
    result: dict[str, Any] = field(repr=False)
    text: str = field(repr=False, default="")  # what a model that reads text reads

    @property
    def meta(self) -> dict[str, Any]:
        meta = self.result.get("_meta")
        return meta if isinstance(meta, dict) else {}


@dataclass
class Replay:
    startup: dict[str, float]  # seconds from spawn to the initialize answer, per server
    tools: dict[str, list[dict[str, Any]]]  # each server's tools/list, as the agent got it
    calls: list[Call]
    peers: dict[str, Peer]


@contextlib.contextmanager
def replayed(
    route: Route,
    repo: Path,
    workdir: Path,
    index: int,
    client: str = "bench",
    pause: float = 1.0,
    calls: bool = True,
) -> Iterator[Replay]:
    """The session through ``route``, its processes still running inside the ``with`` (to recover what
    was shrunk), closed after. ``client`` is the name the agent introduces itself with; ``calls``
    False: the servers are only started, initialized and listed."""
    peers = {
        s.name: Peer(route.argv(s, workdir), {**os.environ, **route.env, **s.env}, workdir)
        for s in servers(repo, workdir, index)
    }
    try:
        for peer in peers.values():
            peer.send_initialize(client)
        startup = {name: peer.initialized() for name, peer in peers.items()}
        tools = {name: peer.tools() for name, peer in peers.items()}
        time.sleep(pause)
        made: list[Call] = []
        for i, (name, tool, arguments) in enumerate(session(repo) if calls else ()):
            took, answer = peers[name].request("tools/call", route.call(name, tool, arguments))
            result = answer.get("result") or {"isError": True, "error": answer.get("error")}
            first = all(c.server != name for c in made)
            made.append(Call(i, name, tool, arguments, took, first, result, text_of(result)))
        yield Replay(startup, tools, made, peers)
    finally:
        for peer in peers.values():
            peer.close()
