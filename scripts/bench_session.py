"""Replay a multi-server coding-agent session directly, through mcp-compressor and through mcpsqueeze.

One process, one run: a copy of this repository's history in a temp dir is served by the real public
servers (npm `server-filesystem` and `server-memory` from .cache/node, PyPI `mcp-server-git` from
.cache/pyservers/bin), one proxy process per server, and the same session of agent calls (file reads,
trees, searches, git log/diff/show/status, memory writes and reads, some repeats) is replayed in every
configuration. Rounds interleave the configurations (rotating their order) so drift hits all equally.

Each server is initialized and then, as every MCP client does before its first call, asked for its
tools (`tools/list`, the three at once, once every `initialize` is answered; `--no-listing`: no listing,
as this script did until issue 24's second pass; `--pause S`: an agent's thinking time between the
listings and the first call, 1 s by default, the same for every configuration; `--no-listing --pause 0`
is the old behaviour). Printed per configuration: median, p90 and total call
latency; first-call latency per server; start-up (spawn to the first `initialize` answer); the proxy's
RSS (with its helper processes); o200k tokens the model receives (text blocks of every result). Then a
200 KB JSON result shrunk to 20,000 characters (the stdlib `mcpsqueeze.demo.bulk` server), and with
`--memory`, 1,000 calls of 200 KB-1 MB through one `wrap`: RSS over time, exit time and the summary.

    python scripts/bench_session.py [--rounds 3] [--budget 20000] [--memory] [--json out.json]

mcp-compressor 0.38.2 must be installed in its own venv: `python3 -m venv .cache/mcpc &&
.cache/mcpc/bin/pip install mcp-compressor==0.38.2`. To add a configuration, append to `configurations()`;
every call is kept as a `CallRecord` (see `--json`), so other figures can be computed from them later.
"""

from __future__ import annotations

import argparse
import compileall
import contextlib
import itertools
import json
import os
import queue
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))  # this tree's mcpsqueeze (token counts), not an installed one
CACHE = ROOT / ".cache"
# mcp-compressor 0.38.2: in .cache/mcpc, or wherever MCPSQUEEZE_BENCH_MCPC names its binary
COMPRESSOR = Path(os.environ.get("MCPSQUEEZE_BENCH_MCPC") or CACHE / "mcpc" / "bin" / "mcp-compressor")
PROTOCOL = "2025-06-18"
CALL_TIMEOUT = 120.0


# -- servers and configurations ------------------------------------------------------------------------------


def _paths() -> dict[str, str]:
    env = CACHE / "node" / "paths.env"
    if not env.exists():
        sys.exit("run scripts/install-test-deps.sh first (no .cache/node/paths.env)")
    pairs = (line.strip().split("=", 1) for line in env.read_text().splitlines() if "=" in line)
    return {key: value for key, value in pairs if not key.startswith("#")}


@dataclass(frozen=True)
class Server:
    name: str
    argv: tuple[str, ...]
    env: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Configuration:
    """How one server is reached: `wrap(server, workdir)` gives the argv the agent would spawn."""

    name: str
    wrap: Callable[[Server, Path], list[str]]
    invoke: Callable[[Server, str, dict[str, Any]], tuple[str, dict[str, Any]]] = lambda _s, t, a: (t, a)
    src: Path | None = None  # another source tree's mcpsqueeze (`--base`): its processes import that one
    client: str = "bench"  # the clientInfo.name the replaying agent introduces itself with


def _compressor_invoke(server: Server, tool: str, args: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    # mcp-compressor's default "compressed-tools" mode hides the tools behind one wrapper per server.
    return f"{server.name}_invoke_tool", {"tool_name": tool, "tool_input": args}


def _wrap_argv(budget: int) -> Callable[[Server, Path], list[str]]:
    python = sys.executable
    return lambda s, w: [
        python, "-m", "mcpsqueeze.cli", "wrap", "--budget", str(budget), "--name", s.name,
        "--recovery-dir", str(w / "recovery"), "--stats-file", str(w / f"stats-{s.name}.jsonl"),
        "--", *s.argv,
    ]  # fmt: skip


def configurations(budget: int, base: Path | None = None) -> list[Configuration]:
    """direct, the anchor, ours, ours with `--recovery memory`; and with `base`, ours from that source tree
    (the same flags: e.g. the last landed main, for a before/after in one interleaved run)."""
    python = sys.executable
    extra = [Configuration(f"BASE wrap --budget {budget}", _wrap_argv(budget), src=base)] if base else []
    return [
        Configuration("direct", lambda s, _w: list(s.argv)),
        Configuration(
            f"mcp-compressor --shrinkfit={budget}",
            lambda s, _w: [str(COMPRESSOR), f"--shrinkfit={budget}", "-n", s.name, "--", *s.argv],
            _compressor_invoke,
        ),
        Configuration(f"mcpsqueeze wrap --budget {budget}", _wrap_argv(budget)),
        Configuration(
            f"mcpsqueeze wrap --budget {budget} --recovery memory",
            lambda s, w: [
                python,
                "-m",
                "mcpsqueeze.cli",
                "wrap",
                "--budget",
                str(budget),
                "--name",
                s.name,
                "--recovery",
                "memory",
                "--",
                *s.argv,
            ],
        ),
        *extra,
    ]


# -- a raw JSON-RPC client -----------------------------------------------------------------------------------


class Peer:
    """One spawned MCP server (or proxy) spoken to over stdio, timing each request."""

    def __init__(self, argv: Sequence[str], env: dict[str, str], cwd: Path) -> None:
        self.started = time.perf_counter()
        self.proc = subprocess.Popen(
            list(argv),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
            cwd=cwd,
        )
        self._ids = itertools.count(1)
        self._answers: queue.Queue[tuple[float, dict[str, Any]]] = queue.Queue()
        self.stderr: list[bytes] = []
        threading.Thread(target=self._read, daemon=True).start()
        threading.Thread(target=self._read_err, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            if line.strip():
                message = json.loads(line)
                if "id" in message and "method" not in message:
                    self._answers.put((time.perf_counter(), message))

    def _read_err(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.stderr.append(line)

    def send(self, message: dict[str, Any]) -> float:
        assert self.proc.stdin is not None
        data = (json.dumps(message) + "\n").encode()
        sent = time.perf_counter()
        self.proc.stdin.write(data)
        self.proc.stdin.flush()
        return sent

    def request(self, method: str, params: dict[str, Any]) -> tuple[float, dict[str, Any]]:
        """(seconds to the answer, the answer)."""
        request_id = next(self._ids)
        sent = self.send({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
        try:
            when, answer = self._answers.get(timeout=CALL_TIMEOUT)
        except queue.Empty:
            raise RuntimeError(f"no answer to {method}; stderr: {b''.join(self.stderr)[-2000:]!r}") from None
        assert answer.get("id") == request_id, answer
        return when - sent, answer

    def send_initialize(self, client: str = "bench") -> None:
        params = {
            "protocolVersion": PROTOCOL,
            "capabilities": {},
            "clientInfo": {"name": client, "version": "1"},
        }
        self.send({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params})

    def initialize(self, sent: bool = False) -> float:
        """Seconds from spawning to the initialize answer (`sent`: `send_initialize` was called already)."""
        if not sent:
            self.send_initialize()
        try:
            when, answer = self._answers.get(timeout=CALL_TIMEOUT)
        except queue.Empty:
            raise RuntimeError(f"no initialize answer; stderr: {b''.join(self.stderr)[-2000:]!r}") from None
        assert "result" in answer, answer
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return when - self.started

    def send_listing(self) -> None:
        """Ask for the tools (the answer is read by `listed`), as a client does once initialized."""
        self.send({"jsonrpc": "2.0", "id": "listing", "method": "tools/list", "params": {}})

    def listed(self) -> None:
        try:
            _, answer = self._answers.get(timeout=CALL_TIMEOUT)
        except queue.Empty:
            raise RuntimeError(f"no tools/list answer; stderr: {b''.join(self.stderr)[-2000:]!r}") from None
        assert answer.get("id") == "listing" and "result" in answer, answer

    def rss_mb(self) -> tuple[float, float]:
        """(this process's RSS, with its descendants that are not the backend server) in MB."""
        own = _rss(self.proc.pid)
        return own, own + sum(_rss(pid) for pid in _helpers(self.proc.pid))

    def close(self) -> tuple[float, str]:
        """Close stdin like a leaving agent: (seconds to exit, stderr)."""
        assert self.proc.stdin is not None
        started = time.perf_counter()
        self.proc.stdin.close()
        try:
            self.proc.wait(60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        took = time.perf_counter() - started
        time.sleep(0.05)  # let the stderr reader finish
        return took, b"".join(self.stderr).decode("utf-8", "replace")


def summary_counts(stderr: str) -> dict[str, int]:
    """The figures of the summary `wrap` prints at exit (`  calls proxied 1000`, `  tokens before 1,234`)."""
    counts: dict[str, int] = {}
    for line in stderr.splitlines():
        words = line.split()
        if line.startswith("  ") and len(words) >= 3 and words[2].replace(",", "").isdigit():
            counts[f"{words[0]} {words[1]}"] = int(words[2].replace(",", ""))
    return counts


def _env(src: Path | None = None) -> dict[str, str]:
    extra = os.environ.get("PYTHONPATH")
    first = src if src is not None else ROOT / "src"
    return {**os.environ, "PYTHONPATH": str(first) + (os.pathsep + extra if extra else "")}


def _rss(pid: int) -> float:
    with contextlib.suppress(OSError, IndexError, ValueError):
        status = Path(f"/proc/{pid}/status").read_text()
        return int(status.split("VmRSS:")[1].split()[0]) / 1024
    return 0.0


def _children(pid: int) -> list[int]:
    found: list[int] = []
    with contextlib.suppress(OSError):
        for task in Path(f"/proc/{pid}/task").iterdir():
            with contextlib.suppress(OSError):
                found += [int(c) for c in (task / "children").read_text().split()]
    return found


def _helpers(pid: int) -> list[int]:
    """Our own helper processes (the token counter): children running `mcpsqueeze.accounting._counter`."""
    out = []
    for child in _children(pid):
        with contextlib.suppress(OSError):
            if b"mcpsqueeze.accounting._counter" in Path(f"/proc/{child}/cmdline").read_bytes():
                out.append(child)
    return out


def presented_text(result: dict[str, Any]) -> str:
    """What a model reads: the text of every text block, in order."""
    blocks = result.get("content") or []
    return "".join(b.get("text", "") for b in blocks if isinstance(b, dict) and b.get("type") == "text")


# -- the session ---------------------------------------------------------------------------------------------


@dataclass
class CallRecord:
    configuration: str
    round: int
    server: str
    index: int  # position in the session
    tool: str
    seconds: float
    first_for_server: bool
    chars: int
    text: str = field(repr=False, default="")
    error: str | None = None
    meta: dict[str, Any] = field(repr=False, default_factory=dict)  # the result's _meta (truncation, dedup)
    result: dict[str, Any] = field(repr=False, default_factory=dict)  # the whole result, as received


def session(repo: Path) -> list[tuple[str, str, dict[str, Any]]]:
    """The replayed agent session: (server, tool, arguments), 39 calls."""
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


def servers(repo: Path, workdir: Path, config_index: int) -> list[Server]:
    paths = _paths()
    node = paths["NODE22"]
    memory_file = workdir / f"memory-{config_index}.jsonl"  # each configuration sees the same state sequence
    return [
        Server("fs", (node, paths["FILESYSTEM_JS"], str(repo))),
        Server("git", (f"{paths['PY_SERVERS_BIN']}/mcp-server-git", "--repository", str(repo))),
        Server("memory", (node, paths["MEMORY_JS"]), {"MEMORY_FILE_PATH": str(memory_file)}),
    ]


@dataclass
class RunFigures:
    configuration: str
    round: int
    startup: dict[str, float]
    rss: dict[str, tuple[float, float]]
    exit_seconds: dict[str, float]
    calls: list[CallRecord]


def run_session(
    config: Configuration,
    index: int,
    round_no: int,
    repo: Path,
    workdir: Path,
    after: Callable[[dict[str, Peer], list[CallRecord]], None] | None = None,
    listing: bool = True,
    pause: float = 0.0,
) -> RunFigures:
    """One configuration's replay; ``after(peers, calls)`` runs before the peers close (e.g. to
    recover what was shrunk). ``listing``: each server is asked for its tools once all are initialized,
    before the first call (as clients do); ``pause``: seconds between that and the first call."""
    env = _env(config.src)
    peers: dict[str, Peer] = {}
    startup: dict[str, float] = {}
    for server in servers(repo, workdir, index):
        peers[server.name] = Peer(config.wrap(server, workdir), {**env, **server.env}, workdir)
    for peer in peers.values():  # spawned together and asked at once, as an agent does
        peer.send_initialize(config.client)
    for name, peer in peers.items():
        startup[name] = peer.initialize(sent=True)
    if listing:
        for peer in peers.values():
            peer.send_listing()
        for peer in peers.values():
            peer.listed()
    if pause:
        time.sleep(pause)
    by_name = {s.name: s for s in servers(repo, workdir, index)}
    calls: list[CallRecord] = []
    seen: set[str] = set()
    for i, (name, tool, args) in enumerate(session(repo)):
        invoked, invoked_args = config.invoke(by_name[name], tool, args)
        took, answer = peers[name].request("tools/call", {"name": invoked, "arguments": invoked_args})
        result = answer.get("result") or {}
        error = None if "result" in answer and not result.get("isError") else json.dumps(answer)[:300]
        text = presented_text(result)
        calls.append(
            CallRecord(
                config.name,
                round_no,
                name,
                i,
                tool,
                took,
                name not in seen,
                len(text),
                text,
                error,
                result.get("_meta") or {},
                result,
            )
        )
        seen.add(name)
    if after is not None:
        after(peers, calls)
    rss = {name: peer.rss_mb() for name, peer in peers.items()}
    exits = {name: peer.close()[0] for name, peer in peers.items()}
    return RunFigures(config.name, round_no, startup, rss, exits, calls)


# -- the 200 KB result ---------------------------------------------------------------------------------------


def run_bulk(config: Configuration, workdir: Path, round_no: int, size: int, calls: int) -> list[float]:
    server = Server("bulk", (sys.executable, "-m", "mcpsqueeze.demo.bulk"))
    env = _env(config.src)
    peer = Peer(config.wrap(server, workdir), env, workdir)
    peer.initialize()
    times = []
    for seed in range(calls + 1):
        tool, args = config.invoke(server, "blob", {"size": size, "seed": round_no * 1000 + seed})
        took, answer = peer.request("tools/call", {"name": tool, "arguments": args})
        assert "result" in answer, answer
        if seed:  # the first call warms the process up; it is reported with the session's first calls
            times.append(took)
    peer.close()
    return times


# -- the memory run ------------------------------------------------------------------------------------------


def run_memory(workdir: Path, budget: int, calls: int) -> None:
    stats = workdir / "memory-stats.jsonl"
    server = Server("bulk", (sys.executable, "-m", "mcpsqueeze.demo.bulk"))
    argv = [
        sys.executable, "-m", "mcpsqueeze.cli", "wrap", "--budget", str(budget), "--recovery", "memory",
        "--stats-file", str(stats), "--", *server.argv,
    ]  # fmt: skip
    peer = Peer(argv, _env(), workdir)
    peer.initialize()
    samples: list[tuple[int, float, float]] = []
    started = time.perf_counter()
    chars = 0
    for i in range(1, calls + 1):
        size = 200_000 + (i * 7919) % 800_000
        _, answer = peer.request("tools/call", {"name": "blob", "arguments": {"size": size, "seed": i}})
        assert "result" in answer, answer
        chars += size
        if i % 50 == 0:
            own, total = peer.rss_mb()
            samples.append((i, own, total))
    took = time.perf_counter() - started
    exit_seconds, stderr = peer.close()
    print(
        f"\n== memory run: {calls} calls of 200 KB-1 MB ({chars / 1e6:.0f} MB) through one wrap, {took:.1f} s"
    )
    print("  after call   proxy RSS MB   with helper MB")
    for i, own, total in samples:
        print(f"  {i:>10}   {own:>12.1f}   {total:>14.1f}")
    last = [s for s in samples if s[0] > calls - 500]
    if last:
        print(
            f"  last 500 calls: proxy {min(s[1] for s in last):.1f}-{max(s[1] for s in last):.1f} MB, "
            f"with helper {min(s[2] for s in last):.1f}-{max(s[2] for s in last):.1f} MB"
        )
    print(f"  exit after stdin closed: {exit_seconds:.2f} s")
    rows = [json.loads(line) for line in stats.read_text().splitlines()]
    summary = summary_counts(stderr)
    exact = (
        summary.get("calls proxied") == len(rows) == calls
        and summary.get("tokens before") == sum(r["tokens_before"] for r in rows)
        and summary.get("tokens after") == sum(r["tokens_after"] for r in rows)
    )
    calls_seen, before, after = (summary.get(k) for k in ("calls proxied", "tokens before", "tokens after"))
    print(f"  summary: calls {calls_seen}, tokens before {before}, after {after}")
    print(f"  the summary agrees with the {len(rows)} stats lines: {exact}")


# -- reporting -----------------------------------------------------------------------------------------------


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def report(runs: list[RunFigures], bulk: dict[str, list[float]], names: list[str]) -> None:
    from mcpsqueeze.accounting._tokens import count_tokens

    direct = names[0]
    print(
        f"\n== session: {len(runs[0].calls)} calls x {len({r.round for r in runs})} rounds (ms unless noted)"
    )
    rows: dict[str, dict[str, float]] = {}
    for name in names:
        mine = [r for r in runs if r.configuration == name]
        steady = [c.seconds * 1000 for r in mine for c in r.calls]
        totals = [sum(c.seconds for c in r.calls) * 1000 for r in mine]
        firsts = {
            s: statistics.median(
                [c.seconds * 1000 for r in mine for c in r.calls if c.server == s and c.first_for_server]
            )
            for s in ("fs", "git", "memory")
        }
        start = {s: statistics.median([r.startup[s] * 1000 for r in mine]) for s in ("fs", "git", "memory")}
        rss = {s: max(r.rss[s][1] for r in mine) for s in ("fs", "git", "memory")}
        exits = max(max(r.exit_seconds.values()) for r in mine)
        tokens = statistics.median([sum(count_tokens(c.text) for c in r.calls) for r in mine])
        errors = sum(1 for r in mine for c in r.calls if c.error)
        rows[name] = {
            "median": statistics.median(steady),
            "p90": _pct(steady, 0.9),
            "total": statistics.median(totals),
        }
        print(f"\n{name}")
        print(f"  call latency   median {rows[name]['median']:.1f}   p90 {rows[name]['p90']:.1f}   "
              f"session total {rows[name]['total']:.0f} (median of rounds)")  # fmt: skip
        print("  first call     " + "   ".join(f"{s} {v:.1f}" for s, v in firsts.items()))
        print(
            "  start-up       "
            + "   ".join(f"{s} {v:.0f}" for s, v in start.items())
            + "   (spawn to initialize)"
        )
        if name != direct:
            print(
                "  RSS MB (max)   "
                + "   ".join(f"{s} {v:.1f}" for s, v in rss.items())
                + "   (proxy + helpers)"
            )
        print(f"  exit (max)     {exits:.2f} s      o200k tokens received {tokens:,.0f}      errors {errors}")
        if bulk.get(name):
            rows[name]["bulk"] = statistics.median(bulk[name]) * 1000
            print(f"  200 KB JSON    median {rows[name]['bulk']:.1f}")
    print("\n== added over direct (ours vs the anchor)")
    base = rows[direct]
    for name in names[1:]:
        added = {k: rows[name][k] - base[k] for k in rows[name] if k in base}
        print(f"  {name:<36} " + "   ".join(f"{k} +{v:.1f}" for k, v in added.items()))


def _repo(workdir: Path) -> Path:
    """A real git repository to serve: a local clone of this repository's history."""
    repo = workdir / "repo"
    subprocess.run(["git", "clone", "-q", "--no-hardlinks", str(ROOT), str(repo)], check=True)
    subprocess.run(["git", "-C", str(repo), "checkout", "-q", "-B", "bench"], check=True)
    return repo


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--budget", type=int, default=20000)
    parser.add_argument("--bulk-calls", type=int, default=8, help="200 KB calls per configuration and round")
    parser.add_argument("--memory", action="store_true", help="also the 1,000-call memory run")
    parser.add_argument("--memory-calls", type=int, default=1000)
    parser.add_argument("--only-memory", action="store_true")
    parser.add_argument("--json", type=Path, help="write every call record here")
    parser.add_argument(
        "--configs", help="comma-separated indexes of the configurations to run (default all)"
    )
    parser.add_argument(
        "--base",
        type=Path,
        help="another source tree (e.g. a `git worktree add /tmp/base REV`'s src): adds configuration 4, "
        "its wrap with the same flags, interleaved with the others",
    )
    parser.add_argument(
        "--no-listing",
        action="store_true",
        help="no tools/list before the first calls (as until issue 24's second pass; real clients list)",
    )
    parser.add_argument(
        "--pause",
        type=float,
        default=1.0,
        help="seconds between the listings and the first call (an agent's model reads the listing first)",
    )
    args = parser.parse_args(argv)
    if not COMPRESSOR.exists():
        sys.exit(f"mcp-compressor not found at {COMPRESSOR}; see this script's docstring")
    # An installed package has its bytecode compiled (pip does it); a source tree run with
    # PYTHONDONTWRITEBYTECODE=1 would compile every module on every start and first large call instead.
    compileall.compile_dir(str(ROOT / "src"), quiet=1)
    if args.base is not None:
        args.base = args.base.resolve()
        compileall.compile_dir(str(args.base), quiet=1)
    workdir = Path(tempfile.mkdtemp(prefix="bench-session-"))
    try:
        if not args.only_memory:
            repo = _repo(workdir)
            configs = configurations(args.budget, args.base)
            if args.configs:
                configs = [configs[int(i)] for i in args.configs.split(",")]
            runs: list[RunFigures] = []
            bulk: dict[str, list[float]] = {c.name: [] for c in configs}
            for round_no in range(args.rounds):
                shift = round_no % len(configs)
                order = list(enumerate(configs))[shift:] + list(enumerate(configs))[:shift]
                for index, config in order:
                    runs.append(
                        run_session(
                            config,
                            index,
                            round_no,
                            repo,
                            workdir,
                            listing=not args.no_listing,
                            pause=args.pause,
                        )
                    )
                    bulk[config.name] += run_bulk(config, workdir, round_no, 200_000, args.bulk_calls)
                print(f"round {round_no + 1}/{args.rounds} done", file=sys.stderr)
            report(runs, bulk, [c.name for c in configs])
            if args.json:
                records = [asdict(c) for r in runs for c in r.calls]
                for record in records:
                    record.pop("text")
                    record.pop("meta")
                    record.pop("result")
                args.json.write_text(json.dumps({"calls": records, "runs": [
                    {k: v for k, v in asdict(r).items() if k != "calls"} for r in runs
                ]}, indent=1))  # fmt: skip
        if args.memory or args.only_memory:
            run_memory(workdir, args.budget, args.memory_calls)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
