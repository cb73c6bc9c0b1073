"""Tokens an agent is shown: plain JSON vs ``--toonify`` vs ``mcp-compressor --toonify``, on the same input.

Run: ``python scripts/bench_toon.py [--compressor PATH]`` from the repository root. Every configuration
is a real process speaking MCP over stdio in front of the same real backend:

- ``records300``: ``tests/fixtures/records_server.py`` ``get_records(n=300)``, a uniform array of 300
  flat records, once pretty-printed (``indent=2``, as many servers send JSON) and once compact;
- ``records40``: the same with 40 records (about 7 KB, under the default budget);
- ``seed-004 session``: ``tests/fixtures/seed_server.py``, seed 004's example session: two identical
  ``get_large_text`` calls (5,640 characters of prose each).

Configurations: ``direct`` (the backend's own result), ``mcpsqueeze wrap`` with its defaults, with
``--toonify``, with ``--toonify --no-shrink`` (TOON of the whole result, where the default budget of
20,000 characters would shrink it instead), with ``--truncate-chars 2000`` (seed 004's setting), and
mcp-compressor 0.38.2 with ``--toonify`` (its default compressed-tools mode: each call goes through its
``<server>_invoke_tool`` wrapper) and with ``--toonify --shrinkfit``.

Counted: o200k_base tokens and characters of the text blocks of each result, joined with newlines (what
mcpsqueeze's own accounting counts), summed over the calls of the workload. ``_meta`` and
``structuredContent`` are not counted (none of these tools sends structuredContent). Install the
comparison target in its own venv: ``python -m venv .cache/mcpc-i15 && .cache/mcpc-i15/bin/pip install
mcp-compressor==0.38.2``.
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from mcpsqueeze.accounting._tokens import count_tokens  # noqa: E402 - after the path set-up, as in bench_shrink.py

RECORDS = [sys.executable, str(ROOT / "tests" / "fixtures" / "records_server.py")]
SEED = [sys.executable, str(ROOT / "tests" / "fixtures" / "seed_server.py")]
WRAP = [sys.executable, "-m", "mcpsqueeze.cli", "wrap"]
TIMEOUT = 60.0

# name -> (backend argv, [(tool, arguments), ...])
WORKLOADS: dict[str, tuple[list[str], list[tuple[str, dict[str, Any]]]]] = {
    "records300 (indent=2)": (RECORDS, [("get_records", {"n": 300})]),
    "records300 (compact)": (RECORDS, [("get_records", {"n": 300, "compact": True})]),
    "records40 (indent=2)": (RECORDS, [("get_records", {"n": 40})]),
    "seed-004 session": (SEED, [("get_large_text", {}), ("get_large_text", {})]),
}


class Stdio:
    """A raw line-delimited JSON-RPC client over one process's stdin/stdout."""

    def __init__(self, argv: list[str], cwd: Path) -> None:
        env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "NO_COLOR": "1"}
        self.proc = subprocess.Popen(
            argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=cwd, env=env
        )
        self._lines: queue.Queue[bytes | None] = queue.Queue()
        self._ids = 0
        self.stderr = b""
        threading.Thread(target=self._read, daemon=True).start()
        threading.Thread(target=self._drain, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self._lines.put(line)
        self._lines.put(None)

    def _drain(self) -> None:
        assert self.proc.stderr is not None
        self.stderr = self.proc.stderr.read()

    def send(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")
        self.proc.stdin.flush()

    def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        self._ids += 1
        ident = self._ids
        self.send({"jsonrpc": "2.0", "id": ident, "method": method, "params": params})
        deadline = time.monotonic() + TIMEOUT
        while True:
            line = self._lines.get(timeout=max(0.1, deadline - time.monotonic()))
            if line is None:
                raise RuntimeError(f"{method}: the process exited: {self.stderr[-500:]!r}")
            message = json.loads(line)
            if "method" in message:
                if "id" in message:  # a request from the server (ping, roots...): answer it
                    self.send({"jsonrpc": "2.0", "id": message["id"], "result": {}})
                continue
            if message.get("id") == ident:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                result: dict[str, Any] = message["result"]
                return result

    def initialize(self) -> list[dict[str, Any]]:
        self.request(
            "initialize",
            {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "bench", "version": "1"},
            },
        )
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        tools: list[dict[str, Any]] = self.request("tools/list", {}).get("tools", [])
        return tools

    def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def shown(result: dict[str, Any]) -> str:
    blocks = result.get("content") or []
    return "\n".join(b["text"] for b in blocks if isinstance(b, dict) and b.get("type") == "text")


def run(
    front: list[str] | None, backend: list[str], calls: list[tuple[str, dict[str, Any]]], cwd: Path
) -> list[dict[str, Any]]:
    """The results of ``calls``, through ``front + ["--"] + backend`` (or the backend itself)."""
    client = Stdio(backend if front is None else [*front, "--", *backend], cwd)
    try:
        tools = [t["name"] for t in client.initialize()]
        invoke = [name for name in tools if name.endswith("_invoke_tool")]
        results = []
        for tool, arguments in calls:
            if invoke and tool not in tools:  # mcp-compressor hides the backend tools behind a wrapper
                params = {"name": invoke[0], "arguments": {"tool_name": tool, "tool_input": arguments}}
            else:
                params = {"name": tool, "arguments": arguments}
            results.append(client.request("tools/call", params))
        return results
    finally:
        client.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    default = ROOT / ".cache" / "mcpc-i15" / "bin" / "mcp-compressor"
    parser.add_argument(
        "--compressor", default=str(default) if default.exists() else shutil.which("mcp-compressor")
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-toon-") as tmp:
        cwd = Path(tmp)
        rec = ["--recovery-dir", str(cwd / "rec")]
        configs: dict[str, list[str] | None] = {
            "direct (plain JSON)": None,
            "mcpsqueeze wrap": [*WRAP, *rec],
            "mcpsqueeze --toonify": [*WRAP, *rec, "--toonify"],
            "mcpsqueeze --toonify --no-shrink": [*WRAP, *rec, "--toonify", "--no-shrink"],
            "mcpsqueeze --truncate-chars 2000": [*WRAP, *rec, "--truncate-chars", "2000"],
        }
        if args.compressor:
            configs["mcp-compressor --toonify"] = [args.compressor, "--toonify"]
            configs["mcp-compressor --toonify --shrinkfit"] = [args.compressor, "--toonify", "--shrinkfit"]
        else:
            print("mcp-compressor not found: its rows are skipped (see --compressor)", file=sys.stderr)
        print(
            f"{'workload':<24} {'configuration':<38} {'chars':>8} {'tokens':>8} {'vs direct':>10}  _meta keys"
        )
        print("-" * 104)
        for workload, (backend, calls) in WORKLOADS.items():
            base = 0
            for config, front in configs.items():
                try:
                    results = run(front, backend, calls, cwd)
                except (RuntimeError, queue.Empty) as exc:
                    print(f"{workload:<24} {config:<38} failed: {exc}")
                    continue
                texts = [shown(r) for r in results]
                chars = sum(map(len, texts))
                tokens = sum(count_tokens(t) for t in texts)
                base = base or tokens
                keys = sorted({key for r in results for key in (r.get("_meta") or {})})
                print(
                    f"{workload:<24} {config:<38} {chars:>8} {tokens:>8} {100 * tokens / base:>9.1f}%  "
                    + (", ".join(keys) or "-")
                )
            print()


if __name__ == "__main__":
    main()
