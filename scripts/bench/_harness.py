"""What every benchmark shares: source trees to run, a raw stdio client, rounds, statistics, the report.

A benchmark never trusts one run on a shared machine: the alternatives it compares run in the same
process, interleaved round by round in a rotating order, so drift in the machine's load falls on all of
them alike; their figures are compared within one report, not across reports.
"""

from __future__ import annotations

import compileall
import contextlib
import datetime
import itertools
import json
import os
import platform
import queue
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

ROOT = Path(__file__).resolve().parents[2]
CACHE = ROOT / ".cache"
TIMEOUT = 120.0  # seconds an answer may take before the run is given up
T = TypeVar("T")


# -- source trees --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Tree:
    """One mcpsqueeze source tree: this checkout's, another directory's, or a git revision's."""

    label: str
    src: Path  # the directory holding the `mcpsqueeze` package

    @classmethod
    def of(cls, spec: str, workdir: Path) -> Tree:
        """``spec``: ``.`` (this checkout), a directory (a checkout or its ``src/``) or a git revision of
        this repository, extracted with ``git archive`` under ``workdir``. The bytecode is compiled
        first, as an installed package's is (a tree run without it compiles at every start)."""
        if spec == ".":
            tree = cls("this tree", ROOT / "src")
        elif Path(spec).is_dir():
            path = Path(spec).resolve()
            tree = cls(str(path), path / "src" if (path / "src" / "mcpsqueeze").is_dir() else path)
        else:
            label = git("rev-parse", "--short", spec)
            dest = workdir / f"tree-{label}"
            dest.mkdir(exist_ok=True)
            archive = subprocess.run(["git", "-C", str(ROOT), "archive", label, "src"], capture_output=True)
            if archive.returncode:
                raise SystemExit(f"git archive {spec}: {archive.stderr.decode().strip()}")
            subprocess.run(["tar", "-x", "-C", str(dest)], input=archive.stdout, check=True)
            tree = cls(label, dest / "src")
        compileall.compile_dir(str(tree.src), quiet=1)
        return tree

    def env(self) -> dict[str, str]:
        """The environment its processes run in: this tree first on the path."""
        path = os.pathsep.join(filter(None, [str(self.src), os.environ.get("PYTHONPATH")]))
        return {**os.environ, "PYTHONPATH": path}

    def mcpsqueeze(self, *args: str) -> list[str]:
        return [sys.executable, "-m", "mcpsqueeze", *args]

    def call(self, function: str, **arguments: Any) -> Any:
        """``module:function(**arguments)`` run in a child process that imports this tree's mcpsqueeze;
        arguments and answer travel as JSON."""
        done = subprocess.run(
            [sys.executable, "-m", "scripts.bench._child", function],
            input=json.dumps(arguments),
            capture_output=True,
            text=True,
            env=self.env(),
            cwd=ROOT,
        )
        if done.returncode:
            raise SystemExit(f"{function} in {self.label} failed:\n{done.stderr[-3000:]}")
        return json.loads(done.stdout)


def git(*args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(ROOT), *args], capture_output=True, text=True, check=True
    ).stdout.strip()


def cached_bin(variable: str, *parts: str) -> Path:
    """A peer's executable: ``$variable`` when set, else under ``.cache``."""
    return Path(os.environ.get(variable) or CACHE.joinpath(*parts))


def node_paths() -> dict[str, str]:
    """The servers and clients scripts/install-test-deps.sh installed (``.cache/node/paths.env``)."""
    env = CACHE / "node" / "paths.env"
    if not env.exists():
        raise SystemExit("run scripts/install-test-deps.sh first (no .cache/node/paths.env)")
    pairs = (line.split("=", 1) for line in env.read_text().splitlines() if "=" in line and line[0] != "#")
    return dict(pairs)


# -- rounds and statistics -----------------------------------------------------------------------------------


def rotations(items: Sequence[T], rounds: int) -> Iterator[tuple[int, list[T]]]:
    """Each round's order: the items rotated by one more each round."""
    for number in range(rounds):
        shift = number % len(items)
        yield number, [*items[shift:], *items[:shift]]


def spread(values: Sequence[float]) -> dict[str, float]:
    """Median and p90 (nearest rank) of ``values``, and how many there were."""
    ordered = sorted(values) or [0.0]
    p90 = ordered[min(len(ordered) - 1, round(0.9 * (len(ordered) - 1)))]
    return {"median": round(statistics.median(ordered), 2), "p90": round(p90, 2), "n": len(values)}


def ratio(part: float, whole: float) -> float | None:
    return round(part / whole, 3) if whole else None


# -- a raw JSON-RPC client over stdio ------------------------------------------------------------------------


class Peer:
    """One spawned MCP server (or a proxy in front of one), spoken to over stdio, each answer timed.
    Every ``tools/call`` answer is kept in ``calls`` as (tool, result), recover pages included."""

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
        self.calls: list[tuple[str, dict[str, Any]]] = []
        threading.Thread(target=self._read, daemon=True).start()
        threading.Thread(target=self._read_err, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            message = json.loads(line) if line.strip() else {}
            if "id" in message and "method" not in message:
                self._answers.put((time.perf_counter(), message))

    def _read_err(self) -> None:
        assert self.proc.stderr is not None
        self.stderr.extend(self.proc.stderr)

    def send(self, message: dict[str, Any]) -> float:
        assert self.proc.stdin is not None
        data = (json.dumps(message) + "\n").encode()
        sent = time.perf_counter()
        self.proc.stdin.write(data)
        self.proc.stdin.flush()
        return sent

    def answer(self, what: str) -> tuple[float, dict[str, Any]]:
        try:
            return self._answers.get(timeout=TIMEOUT)
        except queue.Empty:
            raise RuntimeError(f"no answer to {what}; stderr: {b''.join(self.stderr)[-2000:]!r}") from None

    def request(self, method: str, params: dict[str, Any]) -> tuple[float, dict[str, Any]]:
        """(seconds to the answer, the answer)."""
        request_id = next(self._ids)
        sent = self.send({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
        when, answer = self.answer(method)
        assert answer.get("id") == request_id, answer
        if method == "tools/call":
            self.calls.append((str(params.get("name")), answer.get("result") or {}))
        return when - sent, answer

    def send_initialize(self, client: str = "bench") -> None:
        params = {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": client, "version": "1"},
        }
        self.send({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params})

    def initialized(self) -> float:
        """Seconds from the spawn to the answer of the ``initialize`` already sent."""
        when, answer = self.answer("initialize")
        assert "result" in answer, answer
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return when - self.started

    def tools(self) -> list[dict[str, Any]]:
        """Every page of ``tools/list``."""
        tools: list[dict[str, Any]] = []
        params: dict[str, Any] = {}
        while True:
            _, answer = self.request("tools/list", params)
            if "result" not in answer:
                raise RuntimeError(f"tools/list failed: {json.dumps(answer)[:300]}")
            tools += answer["result"].get("tools") or []
            if not answer["result"].get("nextCursor"):
                return tools
            params = {"cursor": answer["result"]["nextCursor"]}

    def close(self) -> None:
        """Close stdin as a leaving agent does, and wait for the exit."""
        with contextlib.suppress(OSError):
            assert self.proc.stdin is not None
            self.proc.stdin.close()
        try:
            self.proc.wait(60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def text_of(result: dict[str, Any]) -> str:
    """What a model reads of a result that is read as text: every text block, in order."""
    blocks = result.get("content") or []
    return "".join(b.get("text", "") for b in blocks if isinstance(b, dict) and b.get("type") == "text")


def count_tokens(text: str) -> int:
    """o200k tokens, counted offline by this checkout's counter (``__main__`` puts its ``src`` first)."""
    from mcpsqueeze.accounting._tokens import count_tokens as count

    return count(text)


# -- the report ----------------------------------------------------------------------------------------------


def machine() -> dict[str, Any]:
    cpu = next(
        (
            line.split(":", 1)[1].strip()
            for line in Path("/proc/cpuinfo").read_text().splitlines()
            if line.startswith("model name")
        ),
        platform.processor(),
    )
    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "python": platform.python_version(),
        "system": platform.platform(),
    }


class Report:
    """The one output format: a JSON document on stdout (and in ``--out``) naming the benchmark, its
    command, the date, the machine and its load at the start and the end, and the figures."""

    def __init__(self, benchmark: str, argv: Sequence[str]) -> None:
        dirty = " (modified)" if git("status", "--porcelain", "--untracked-files=no") else ""
        self.head: dict[str, Any] = {
            "benchmark": benchmark,
            "command": "python -m scripts.bench " + " ".join(argv),
            "date": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC"),
            "checkout": git("rev-parse", "--short", "HEAD") + dirty,
            "machine": machine(),
            "load": {"start": round(os.getloadavg()[0], 2)},
        }

    def finish(self, figures: dict[str, Any], out: Path | None) -> None:
        self.head["load"]["end"] = round(os.getloadavg()[0], 2)
        text = json.dumps({**self.head, "figures": figures}, indent=1, ensure_ascii=False)
        print(text)
        if out is not None:
            out.write_text(text + "\n")


def progress(message: str) -> None:
    print(message, file=sys.stderr, flush=True)
