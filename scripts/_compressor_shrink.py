"""Run texts through ``mcp-compressor --shrinkfit=N`` and return what an MCP agent would be shown.

Helper for comparison benchmarks (not part of mcpsqueeze). For every budget it starts one
``mcp-compressor --shrinkfit=<budget> -- <python> <backend> <inputs.json>`` process in its default
"compressed-tools" mode, where a tiny stdio MCP backend (written to a temp dir, stdlib only) serves
one tool ``fetch(name)`` that returns the named input as a single text content block. The
compressor hides backend tools behind two wrappers, ``<server>_get_tool_schema`` and
``<server>_invoke_tool`` (``server_invoke_tool`` with the default server name); each input is fetched
with ``tools/call <server>_invoke_tool {"tool_name": "fetch", "tool_input": {"name": ...}}`` over
line-delimited JSON-RPC on the compressor's stdin/stdout. Budgets run concurrently, one process each.

What counts as "presented": the ``text`` of every text content block of the result, in order,
concatenated with nothing in between. That is what a model sees: when shrinkfit cuts an object it
adds a sibling ``"truncation"`` key inside the one JSON text block; for an array or scalar it keeps
the value's type, puts the recovery record in ``_meta.truncation`` (which clients usually do not
show) and appends a second text block ``{"truncation": {...}}`` as the notice, so the presented text
is ``<shrunk array>{"truncation": ...}``. ``_meta`` and ``structuredContent`` are not included.

A result is ``None`` when mcp-compressor fails or refuses: a JSON-RPC error (for example "shrinkfit
could not fit response and truncation instructions in budget"), an ``isError`` result, a result with
no text block, a timeout, or a process that will not start or dies (budgets below 1024 are
rejected on the command line). The reason is printed on stderr.

Run ``python scripts/_compressor_shrink.py`` for a demo on a 300-item array and a 300-key object.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import IO, Any

# The venv's console script next to this interpreter, else whatever is on PATH.
COMPRESSOR = str(Path(sys.executable).with_name("mcp-compressor"))
if not Path(COMPRESSOR).exists():
    COMPRESSOR = shutil.which("mcp-compressor") or COMPRESSOR
START_TIMEOUT = 20.0  # seconds for initialize + tools/list (the compressor starts the backend first)
CALL_TIMEOUT = 20.0  # seconds per tools/call
PROTOCOL_VERSION = "2025-06-18"
BACKEND_TOOL = "fetch"

BACKEND_SOURCE = '''\
"""Stdio MCP backend: tool `fetch(name)` returns inputs[name] (inputs: JSON file given in argv[1])."""
import json
import sys

with open(sys.argv[1], encoding="utf-8") as handle:
    INPUTS = json.load(handle)
TOOL = {
    "name": "fetch",
    "description": "Return the named text",
    "inputSchema": {
        "type": "object",
        "properties": {"name": {"type": "string"}},
        "required": ["name"],
    },
}


def send(message):
    sys.stdout.write(json.dumps(message) + "\\n")
    sys.stdout.flush()


for line in sys.stdin:
    if not line.strip():
        continue
    message = json.loads(line)
    method = message.get("method")
    if "id" not in message or method is None:
        continue
    ident = message["id"]
    if method == "initialize":
        result = {
            "protocolVersion": message["params"]["protocolVersion"],
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "texts", "version": "1"},
        }
    elif method == "tools/list":
        result = {"tools": [TOOL]}
    elif method == "tools/call":
        name = message["params"].get("arguments", {}).get("name")
        if name not in INPUTS:
            send({"jsonrpc": "2.0", "id": ident, "error": {"code": -32602, "message": f"no input {name!r}"}})
            continue
        result = {"content": [{"type": "text", "text": INPUTS[name]}]}
    else:
        result = {}
    send({"jsonrpc": "2.0", "id": ident, "result": result})
'''


class CompressorError(Exception):
    """mcp-compressor failed, refused or did not answer in time."""


class _Refused(CompressorError):
    """The compressor answered with a JSON-RPC error: it is alive, only this request failed."""


class _Session:
    """One mcp-compressor process (one budget), spoken to with raw JSON-RPC lines."""

    def __init__(self, budget: int, backend: Path, inputs_file: Path, workdir: Path) -> None:
        self.budget = budget
        self._stderr_path = workdir / f"compressor-{budget}.stderr"
        self._stderr: IO[bytes] = self._stderr_path.open("wb")
        argv = [COMPRESSOR, f"--shrinkfit={budget}", "--", sys.executable, str(backend), str(inputs_file)]
        try:
            self._proc = subprocess.Popen(
                argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=self._stderr,
                cwd=workdir,
                env={**os.environ, "NO_COLOR": "1"},
                start_new_session=True,  # own process group: a hung compressor and its backend can be killed
            )
        except OSError as exc:
            self._stderr.close()
            raise CompressorError(f"cannot start {argv[0]}: {exc}") from exc
        self._lines: queue.Queue[bytes | None] = queue.Queue()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        self._next_id = 0
        self.invoke_tool = ""

    def _read(self) -> None:
        assert self._proc.stdout is not None
        for line in self._proc.stdout:
            self._lines.put(line)
        self._lines.put(None)  # EOF

    def _stderr_tail(self) -> str:
        self._stderr.flush()
        text = self._stderr_path.read_text(encoding="utf-8", errors="replace")
        lines = [
            line for line in text.splitlines() if line.strip() and not line.startswith(("│", "╭", "╰", "├"))
        ]
        return " | ".join(lines[-3:])

    def _send(self, message: dict[str, Any]) -> None:
        assert self._proc.stdin is not None
        try:
            self._proc.stdin.write(json.dumps(message).encode() + b"\n")
            self._proc.stdin.flush()
        except (BrokenPipeError, OSError) as exc:
            raise CompressorError(f"compressor stdin closed ({exc}); stderr: {self._stderr_tail()}") from exc

    def request(self, method: str, params: dict[str, Any], timeout: float) -> dict[str, Any]:
        """Send one request and return its ``result``; raise CompressorError on error, EOF or timeout."""
        self._next_id += 1
        ident = self._next_id
        self._send({"jsonrpc": "2.0", "id": ident, "method": method, "params": params})
        deadline = time.monotonic() + timeout
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise CompressorError(f"{method}: no answer within {timeout:.0f} s")
            try:
                line = self._lines.get(timeout=remaining)
            except queue.Empty:
                continue
            if line is None:
                try:
                    code: int | None = self._proc.wait(timeout=2)
                except subprocess.TimeoutExpired:
                    code = None
                raise CompressorError(
                    f"{method}: compressor exited (code {code}); stderr: {self._stderr_tail()}"
                )
            try:
                message = json.loads(line)
            except ValueError:
                print(f"[budget {self.budget}] non-JSON stdout line ignored: {line[:120]!r}", file=sys.stderr)
                continue
            if not isinstance(message, dict):
                continue
            if "method" in message:  # a request or notification from the compressor
                if "id" in message:
                    reply: dict[str, Any] = {"jsonrpc": "2.0", "id": message["id"]}
                    if message["method"] == "ping":
                        reply["result"] = {}
                    else:
                        reply["error"] = {"code": -32601, "message": "method not found"}
                    self._send(reply)
                continue
            if message.get("id") != ident:
                continue  # a late answer to an earlier, timed-out request
            if "error" in message:
                error = message["error"]
                detail = error.get("message") if isinstance(error, dict) else error
                raise _Refused(f"{method}: JSON-RPC error: {detail}")
            result = message.get("result")
            if not isinstance(result, dict):
                raise CompressorError(f"{method}: result is not an object: {result!r:.200}")
            return result

    def start(self) -> None:
        """Initialize the MCP session and find the compressor's invoke wrapper tool."""
        self.request(
            "initialize",
            {
                "protocolVersion": PROTOCOL_VERSION,
                "capabilities": {},
                "clientInfo": {"name": "compressor-shrink", "version": "1"},
            },
            START_TIMEOUT,
        )
        self._send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        tools = self.request("tools/list", {}, START_TIMEOUT).get("tools", [])
        names = [tool.get("name", "") for tool in tools if isinstance(tool, dict)]
        invoke = [name for name in names if name.endswith("_invoke_tool")]
        if len(invoke) != 1:
            raise CompressorError(f"expected one *_invoke_tool wrapper, got tools {names}")
        self.invoke_tool = invoke[0]

    def fetch(self, name: str) -> dict[str, Any]:
        """The compressor's CallToolResult for the backend's ``fetch(name)``."""
        arguments = {"tool_name": BACKEND_TOOL, "tool_input": {"name": name}}
        return self.request("tools/call", {"name": self.invoke_tool, "arguments": arguments}, CALL_TIMEOUT)

    def close(self, force: bool = False) -> None:
        """Close stdin and let the compressor exit; kill its process group if forced or it lingers."""
        if self._proc.stdin is not None:
            with contextlib.suppress(OSError):
                self._proc.stdin.close()
        try:
            self._proc.wait(timeout=0 if force else 5)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self._proc.pid, signal.SIGKILL)  # the compressor and the backend it started
            self._proc.wait()
        self._reader.join(timeout=5)
        self._stderr.close()


def presented_text(result: dict[str, Any]) -> str | None:
    """The concatenation of all text blocks of a CallToolResult (None: no text block)."""
    blocks = result.get("content")
    if not isinstance(blocks, list):
        return None
    texts = [
        block["text"]
        for block in blocks
        if isinstance(block, dict) and block.get("type") == "text" and isinstance(block.get("text"), str)
    ]
    return "".join(texts) if texts else None


def _run_budget(
    budget: int, names: list[str], backend: Path, inputs_file: Path, workdir: Path
) -> dict[str, dict[str, Any] | None]:
    """CallToolResults for every input at one budget (None where the compressor failed).

    A refusal (JSON-RPC error or ``isError``) only loses that input. A timeout or a dead process kills
    the compressor and starts a new one for the next input; a compressor that cannot start loses
    every remaining input of the budget.
    """
    results: dict[str, dict[str, Any] | None] = dict.fromkeys(names)
    session: _Session | None = None
    try:
        for index, name in enumerate(names):
            if session is None:
                try:
                    session = _Session(budget, backend, inputs_file, workdir)
                except CompressorError as exc:
                    print(f"mcp-compressor --shrinkfit={budget}: {exc}", file=sys.stderr)
                    return results
                try:
                    session.start()
                except CompressorError as exc:
                    session.close(force=True)
                    session = None
                    skipped = len(names) - index
                    print(
                        f"mcp-compressor --shrinkfit={budget}: {exc} ({skipped} input(s) -> None)",
                        file=sys.stderr,
                    )
                    return results
            try:
                result = session.fetch(name)
            except _Refused as exc:
                print(f"mcp-compressor --shrinkfit={budget}, input {name!r}: {exc}", file=sys.stderr)
                continue
            except CompressorError as exc:
                print(f"mcp-compressor --shrinkfit={budget}, input {name!r}: {exc}", file=sys.stderr)
                session.close(force=True)
                session = None
                continue
            if result.get("isError"):
                detail = f"{presented_text(result)!r:.300}"
                print(
                    f"mcp-compressor --shrinkfit={budget}, input {name!r}: isError result {detail}",
                    file=sys.stderr,
                )
                continue
            results[name] = result
    finally:
        if session is not None:
            session.close()
    return results


def compressor_results(
    inputs: dict[str, str], budgets: Iterable[int]
) -> dict[tuple[str, int], dict[str, Any] | None]:
    """The full CallToolResult mcp-compressor returns for each (input name, budget), or None on failure."""
    budget_list = list(dict.fromkeys(budgets))
    names = list(inputs)
    if not Path(COMPRESSOR).exists():
        print(f"mcp-compressor not found at {COMPRESSOR}", file=sys.stderr)
        return {(name, budget): None for name in names for budget in budget_list}
    out: dict[tuple[str, int], dict[str, Any] | None] = {}
    with tempfile.TemporaryDirectory(prefix="compressor-shrink-") as tmp:
        workdir = Path(tmp)
        backend = workdir / "backend.py"
        backend.write_text(BACKEND_SOURCE, encoding="utf-8")
        inputs_file = workdir / "inputs.json"
        inputs_file.write_text(json.dumps(inputs), encoding="utf-8")
        with ThreadPoolExecutor(max_workers=max(1, len(budget_list))) as pool:
            futures = {
                budget: pool.submit(_run_budget, budget, names, backend, inputs_file, workdir)
                for budget in budget_list
            }
            for budget, future in futures.items():
                for name, result in future.result().items():
                    out[(name, budget)] = result
    return out


def _demo() -> None:
    items = [
        {"id": i, "name": f"item {i}", "tags": ["alpha", "beta"], "note": f"record number {i} " * 4}
        for i in range(300)
    ]
    records = {
        f"user{i:03d}": {"id": i, "email": f"user{i}@example.com", "bio": "lorem ipsum " * 6}
        for i in range(300)
    }
    inputs = {"array": json.dumps(items), "object": json.dumps(records)}
    budgets = (20000, 10000, 4000, 1024)
    started = time.monotonic()
    results = compressor_results(inputs, budgets)
    elapsed = time.monotonic() - started
    for name, text in inputs.items():
        print(f"=== {name}: {len(text)} characters in")
        for budget in budgets:
            result = results[(name, budget)]
            presented = None if result is None else presented_text(result)
            if result is None or presented is None:
                print(f"--- budget {budget}: None (mcp-compressor failed or refused)")
                continue
            blocks = len(result.get("content", []))
            has_meta = "truncation" in (result.get("_meta") or {})
            verdict = "within" if len(presented) <= budget else "OVER"
            print(
                f"--- budget {budget}: {len(presented)} characters presented ({verdict} budget), "
                f"{blocks} content block(s), _meta.truncation: {has_meta}"
            )
            print(f"first 300: {presented[:300]}")
            print(f"last 300:  {presented[-300:]}")
    print(f"({elapsed:.2f} s)")


if __name__ == "__main__":
    _demo()
