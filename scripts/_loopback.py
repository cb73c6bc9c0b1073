"""What the loopback HTTP benchmarks share (not part of mcpsqueeze): a one-tool stdio backend, free
ports, and a process started and waited for until it listens.

`bench_stateless.py` and `bench_replica.py` each run themselves with `--backend` as the backend behind a
`wrap --transport streamable-http`; only the tool differs, so it is a parameter here.
"""

from __future__ import annotations

import contextlib
import json
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from typing import Any

__all__ = ["free_port", "serve_stdio", "serve_tool", "started", "wait_port"]


def serve_stdio(name: str, tools: list[str], call: Callable[[dict[str, Any]], dict[str, Any]]) -> None:
    """A stdio MCP server `name` listing `tools`, whose `tools/call` result is `call(params)`, answering
    every request at once (anything else gets an empty result)."""
    for line in sys.stdin:
        message = json.loads(line)
        if "id" not in message or "method" not in message:
            continue
        method, result = message["method"], {}
        if method == "initialize":
            result = {"protocolVersion": message["params"]["protocolVersion"], "capabilities": {"tools": {}},
                      "serverInfo": {"name": name, "version": "1"}}  # fmt: skip
        elif method == "tools/list":
            result = {"tools": [{"name": tool, "inputSchema": {"type": "object"}} for tool in tools]}
        elif method == "tools/call":
            result = call(message["params"])
        sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}) + "\n")
        sys.stdout.flush()


def serve_tool(name: str, answer: Callable[[dict[str, Any]], str]) -> None:
    """A stdio MCP server with one tool `name` whose text is `answer(arguments)`, answering at once."""

    def call(params: dict[str, Any]) -> dict[str, Any]:
        return {"content": [{"type": "text", "text": answer(params["arguments"])}]}

    serve_stdio(name, [name], call)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_port(port: int) -> None:
    end = time.monotonic() + 60
    while time.monotonic() < end:
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=0.2):
            return
        time.sleep(0.05)
    raise TimeoutError(port)


@contextlib.contextmanager
def started(argv: list[str], port: int) -> Iterator[subprocess.Popen[bytes]]:
    """`argv` running, once it listens on `port`; terminated on the way out."""
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_port(port)
        yield proc
    finally:
        proc.terminate()
        proc.wait(15)
