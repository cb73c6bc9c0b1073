"""Per-call latency through `wrap --transport streamable-http` in front of a stdio backend, by protocol era.

Starts one wrap on a loopback port (a tiny stdio backend behind it, answering at once), then times N
sequential small `tools/call`s four ways: the SDK client pinned to 2026-07-28 (stateless, one POST per
call), the SDK client on a 2025-11-25 session, and raw httpx2 POSTs in each era (no SDK client work, so
what is left is the proxy's). Prints median / p90 ms per call (docs/benchmarks.md).

    PYTHONPATH=src python scripts/bench_stateless.py [--calls 200]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import sys
import time
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

from _loopback import free_port, serve_tool, started


def backend() -> None:
    """One tool `echo` answering a short text at once."""
    serve_tool("echo", json.dumps)


@contextlib.contextmanager
def wrap(port: int) -> Iterator[None]:
    argv = [sys.executable, "-m", "mcpsqueeze.cli", "wrap", "--transport", "streamable-http", "--port",
            str(port), "--recovery", "memory", "-q", "--", sys.executable, os.path.abspath(__file__),
            "--backend"]  # fmt: skip
    with started(argv, port):
        yield


async def timed(calls: int, one: Callable[[int], Awaitable[Any]]) -> list[float]:
    for i in range(5):  # warm-up: backend start, imports, first listing
        await one(-i)
    out = []
    for i in range(calls):
        started = time.perf_counter()
        await one(i)
        out.append((time.perf_counter() - started) * 1000)
    return out


async def sdk(url: str, mode: str, calls: int) -> list[float]:
    import mcp

    async with mcp.Client(url, mode=mode) as client:  # type: ignore[arg-type]
        return await timed(calls, lambda i: client.call_tool("echo", {"i": i}))


async def raw(url: str, modern: bool, calls: int) -> list[float]:
    import httpx2

    headers = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
    async with httpx2.AsyncClient(timeout=30) as http:
        if modern:
            headers |= {"mcp-protocol-version": "2026-07-28", "mcp-method": "tools/call", "mcp-name": "echo"}
        else:
            init = {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "b", "version": "1"},
            }
            got = await http.post(
                url, json={"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": init}, headers=headers
            )
            headers |= {"mcp-session-id": got.headers["mcp-session-id"], "mcp-protocol-version": "2025-11-25"}
            await http.post(
                url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=headers
            )

        async def one(i: int) -> None:
            params: dict[str, Any] = {"name": "echo", "arguments": {"i": i}}
            if modern:
                params["_meta"] = {
                    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                    "io.modelcontextprotocol/clientCapabilities": {},
                }
            body = {"jsonrpc": "2.0", "id": i + 10, "method": "tools/call", "params": params}
            response = await http.post(url, json=body, headers=headers)
            assert response.status_code == 200, response.text

        return await timed(calls, one)


def main() -> None:
    if sys.argv[1:] == ["--backend"]:
        backend()
        return
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=200)
    args = parser.parse_args()
    import anyio

    port = free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    with wrap(port):
        for label, run in (
            ("SDK client, 2026-07-28", lambda: sdk(url, "2026-07-28", args.calls)),
            ("SDK client, 2025-11-25 session", lambda: sdk(url, "legacy", args.calls)),
            ("raw POST, 2026-07-28", lambda: raw(url, True, args.calls)),
            ("raw POST, 2025-11-25 session", lambda: raw(url, False, args.calls)),
        ):
            ms = anyio.run(run)
            p90 = statistics.quantiles(ms, n=10)[-1]
            print(f"{label:32} median {statistics.median(ms):6.2f} ms  p90 {p90:6.2f} ms  ({len(ms)} calls)")


if __name__ == "__main__":
    main()
