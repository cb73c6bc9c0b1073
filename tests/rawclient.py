"""A raw JSON-RPC client over a subprocess's stdio, for tests that compare wire messages field for field.

It is deliberately not the SDK client: tests must see exactly the JSON the proxy (or a server) sent,
including unknown fields, explicit nulls and malformed-input answers.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import queue
import re
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
PROTOCOL = "2025-11-25"
# A streamable-HTTP client's first request, the Accept header every POST carries, and a request to send
# once a session is open: for tests that speak HTTP to a door directly.
HTTP_INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": PROTOCOL, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
}
HTTP_ACCEPT = {"Accept": "application/json, text/event-stream"}
HTTP_PING = {"jsonrpc": "2.0", "id": 2, "method": "ping"}


def cli(*args: str) -> list[str]:
    """argv that runs the real installed CLI entry point."""
    return [sys.executable, "-m", "mcpsqueeze.cli", *args]


# The demo server's kitchen-sink tool takes one flag of every kind; these flags and the typed
# arguments they must become are checked by the flag parser's unit test and through a real session.
KITCHEN_SINK_FLAGS = (
    "--page-id", "p1", "--page-size", "25", "--ratio", "0.25", "--verbose",
    "--tags", "a", "--tags", "b", "--filter", '{"state": "open"}', "--mode", "slow",
)  # fmt: skip
KITCHEN_SINK_ARGS = {
    "page_id": "p1",
    "pageSize": 25,
    "ratio": 0.25,
    "verbose": True,
    "tags": ["a", "b"],
    "filter": {"state": "open"},
    "mode": "slow",
}


def demo_server() -> list[str]:
    return [sys.executable, "-m", "mcpsqueeze.demo.server"]


class RawClient:
    def __init__(
        self,
        argv: Sequence[str],
        *,
        env: dict[str, str] | None = None,
        on_request: Callable[[dict[str, Any]], dict[str, Any]] | None = None,
    ) -> None:
        self.proc = subprocess.Popen(
            list(argv),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env={**os.environ, **(env or {})},
        )
        self._start(on_request)
        threading.Thread(target=self._read, daemon=True).start()
        self._stderr_reader = threading.Thread(target=self._read_stderr, daemon=True)
        self._stderr_reader.start()

    def _start(self, on_request: Callable[[dict[str, Any]], dict[str, Any]] | None) -> None:
        self._ids = itertools.count(1)
        self._responses: dict[Any, dict[str, Any]] = {}
        self._cond = threading.Condition()
        self.notifications: list[dict[str, Any]] = []
        self.on_request = on_request
        self.stderr_lines: list[str] = []
        self.closed = False
        self.lines: queue.Queue[bytes] = queue.Queue()

    # -- plumbing ------------------------------------------------------------------------------------------
    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self._received(line)
        self._ended()

    def _received(self, line: bytes) -> None:
        """One line from the other side: a request (answered by `on_request`), a notification, a response."""
        if not line.strip():
            return
        message = json.loads(line)  # strict UTF-8: the proxy must never send anything else
        if "method" in message and "id" in message:
            answer = (self.on_request or _refuse)(message)
            self.send({"jsonrpc": "2.0", "id": message["id"], **answer})
            return
        with self._cond:
            if "method" in message:
                self.notifications.append(message)
            else:
                self._responses[_k(message.get("id"))] = message
            self._cond.notify_all()

    def _ended(self) -> None:
        with self._cond:
            self.closed = True
            self._cond.notify_all()

    def _read_stderr(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.stderr_lines.append(line.decode("utf-8", "replace"))

    @property
    def stderr(self) -> str:
        return "".join(self.stderr_lines)

    def send(self, message: dict[str, Any] | bytes) -> None:
        assert self.proc.stdin is not None
        data = message if isinstance(message, bytes) else json.dumps(message).encode()
        self.proc.stdin.write(data + b"\n")
        self.proc.stdin.flush()

    def wait_response(self, request_id: Any, timeout: float = 30.0) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        with self._cond:
            while _k(request_id) not in self._responses:
                left = deadline - time.monotonic()
                if left <= 0 or self.closed:
                    raise TimeoutError(f"no response to {request_id!r}; stderr:\n{self.stderr}")
                self._cond.wait(left)
            return self._responses.pop(_k(request_id))

    def request(
        self, method: str, params: dict[str, Any] | None = None, timeout: float = 30.0
    ) -> dict[str, Any]:
        request_id = next(self._ids)
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)
        return self.wait_response(request_id, timeout)

    def result(
        self, method: str, params: dict[str, Any] | None = None, timeout: float = 30.0
    ) -> dict[str, Any]:
        response = self.request(method, params, timeout)
        assert "result" in response, response
        result: dict[str, Any] = response["result"]
        return result

    def call(self, tool: str, arguments: dict[str, Any] | None = None, **kw: Any) -> dict[str, Any]:
        return self.result("tools/call", {"name": tool, "arguments": arguments or {}}, **kw)

    def recover_whole(self, arguments: dict[str, Any], tool: str = "squeeze_recover") -> str:
        """The whole text a recovery answers, its pages followed as an agent follows them
        (``_meta["mcpsqueeze/next"]`` is the next page's arguments; each page's first block is exact)."""
        answer = self.call(tool, arguments)
        if "mcpsqueeze/page" not in (answer.get("_meta") or {}):
            return text(answer)
        chunks = []
        while True:
            chunks.append(answer["content"][0]["text"])
            following = answer["_meta"].get("mcpsqueeze/next")
            if following is None:
                return "".join(chunks)
            answer = self.call(tool, following)

    def initialize(
        self, capabilities: dict[str, Any] | None = None, client: str = "rawclient"
    ) -> dict[str, Any]:
        """The handshake, as a client that introduces itself as ``client`` (its clientInfo.name)."""
        result = self.result(
            "initialize",
            {
                "protocolVersion": PROTOCOL,
                "capabilities": capabilities or {},
                "clientInfo": {"name": client, "version": "1"},
            },
        )
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return result

    def close(self, timeout: float = 20.0) -> int:
        """Close stdin like an agent leaving; return the exit code."""
        if self.proc.stdin and not self.proc.stdin.closed:
            self.proc.stdin.close()
        try:
            code = self.proc.wait(timeout)
            # What the process wrote last (its exit summary) may still be in the pipe: read it before the
            # caller looks at `stderr` (a backend that inherited the pipe may keep it open: bounded wait).
            self._stderr_reader.join(5)
            return code
        finally:
            if self.proc.poll() is None:
                self.proc.kill()

    def __enter__(self) -> RawClient:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.proc.poll() is None:
            self.close()


def _k(request_id: Any) -> tuple[str, Any]:
    return (type(request_id).__name__, request_id)


def _refuse(message: dict[str, Any]) -> dict[str, Any]:
    return {"error": {"code": -32601, "message": f"test client does not handle {message['method']}"}}


def text(result: dict[str, Any]) -> str:
    return "\n".join(b["text"] for b in result.get("content", []) if b.get("type") == "text")


def oauth_server() -> Any:
    """tests/proxy/oauth_server.py (the OAuth authorization server fixture), imported once, from any
    test directory."""
    if "oauth_server" not in sys.modules:
        import importlib.util

        spec = importlib.util.spec_from_file_location(
            "oauth_server", ROOT / "tests" / "proxy" / "oauth_server.py"
        )
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules["oauth_server"] = module
        spec.loader.exec_module(module)
    return sys.modules["oauth_server"]


@contextlib.contextmanager
def http_proxy(
    tmp_path: Path, *target: str, extra: tuple[str, ...] = ()
) -> Iterator[tuple[str, subprocess.Popen[str]]]:
    """A spawned `wrap --transport streamable-http --port 0` (options `extra`) in front of `target`:
    its /mcp URL, once it listens, and its process; ended with SIGTERM."""
    argv = cli(
        "wrap", "--transport", "streamable-http", "--port", "0", "--recovery-dir", str(tmp_path / "rec")
    )
    proc = subprocess.Popen(
        [*argv, *extra, "--", *target], stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True
    )
    assert proc.stderr is not None
    try:
        line = proc.stderr.readline()
        match = re.search(r"(http://127\.0\.0\.1:\d+/mcp)", line)
        assert match, line
        yield match.group(1), proc
    finally:
        proc.terminate()
        proc.wait(15)


def serve_ready(proc: subprocess.Popen[str]) -> str:
    """What a spawned `serve` wrote on stderr (a text pipe) up to its "session ready on ..." line, which
    backends' own lines may precede; fails naming its exit status if it ends first."""
    assert proc.stderr is not None
    seen = ""
    while "session ready on" not in seen:
        line = proc.stderr.readline()
        assert line, seen + f"(serve exited with {proc.poll()})"
        seen += line
    return seen


def free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def wait_for(predicate: Callable[[], Any], timeout: float = 20.0, what: str = "condition") -> Any:
    """Poll with a deadline instead of sleeping a fixed time."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.02)
    raise TimeoutError(f"timed out waiting for {what}")


def node_paths() -> dict[str, str]:
    """Paths written by scripts/install-test-deps.sh (empty when it has not run)."""
    env_file = ROOT / ".cache" / "node" / "paths.env"
    paths: dict[str, str] = {}
    if env_file.is_file():
        for line in env_file.read_text().splitlines():
            key, sep, value = line.partition("=")
            if sep:
                paths[key.strip()] = value.strip()
    return paths


def require_node_paths(*keys: str) -> dict[str, str]:
    """Skip locally when the public servers are not installed; on CI that is a failure."""
    paths = node_paths()
    missing = [k for k in keys if not Path(paths.get(k, "/nonexistent")).exists()]
    if missing:
        message = f"run scripts/install-test-deps.sh first (missing {', '.join(missing)})"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return paths


def assert_golden(path: Path, text: str) -> None:
    """Compare an agent-facing text with its golden file; MCPSQUEEZE_UPDATE_GOLDEN=1 rewrites the file."""
    if os.environ.get("MCPSQUEEZE_UPDATE_GOLDEN") == "1":
        path.write_text(text, encoding="utf-8")
    assert path.exists(), f"missing golden file {path}; run with MCPSQUEEZE_UPDATE_GOLDEN=1"
    assert text == path.read_text(encoding="utf-8"), (
        f"{path.name} changed; MCPSQUEEZE_UPDATE_GOLDEN=1 if intended"
    )


def stop(proc: subprocess.Popen[Any]) -> None:
    """Terminate a helper process, killing it if it does not go within 10 s."""
    proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def empty_config() -> Path:
    """An empty config file as the checks want one: regular, 0600, in a private directory."""
    import tempfile

    path = Path(tempfile.mkdtemp(prefix="mcpsqueeze-empty-")) / "config.toml"
    path.write_text("", encoding="utf-8")
    path.chmod(0o600)
    return path
