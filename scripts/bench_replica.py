"""Capacity of one `wrap --transport streamable-http` replica with a Redis store (docs/scale-out.md).

Starts a redis-server and one replica on loopback ports, drives it with concurrent raw streamable-HTTP
clients for a fixed time, and prints calls per second (shrunk and passed through; with Redis and with
memory only) and Redis memory per original from INFO memory. Needs redis-server and mcpsqueeze[redis].

    PYTHONPATH=src python scripts/bench_replica.py [--seconds 10] [--clients 8] [--size 6000]
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from typing import Any

from _loopback import free_port, serve_tool, started


def backend() -> None:
    """The backend: one tool `page` returning about `size` characters of JSON unique to `key`."""

    def page(args: dict[str, Any]) -> str:
        rows, i = [], 0
        while sum(map(len, rows)) < args["size"]:
            rows.append(json.dumps({"key": args["key"], "row": i, "body": "abcdefghij" * 4}))
            i += 1
        return "[" + ",".join(rows) + "]"

    serve_tool("page", page)


def redis_info(port: int) -> dict[str, str]:
    out = subprocess.run(
        ["redis-cli", "-p", str(port), "INFO", "memory"], capture_output=True, text=True, check=True
    ).stdout
    return dict(line.split(":", 1) for line in out.splitlines() if ":" in line)


async def drive(url: str, clients: int, seconds: float, size: int) -> tuple[int, int]:
    """(calls, shrunk) made by `clients` sessions, one call in flight each, for `seconds`."""
    import anyio
    import httpx2

    calls = shrunk = 0
    end = time.monotonic() + seconds
    headers = {"accept": "application/json, text/event-stream", "content-type": "application/json"}

    async def post(http: Any, body: dict[str, Any], extra: dict[str, str]) -> Any:
        response = await http.post(url, json={"jsonrpc": "2.0", **body}, headers={**headers, **extra})
        for line in response.text.splitlines():
            if line.startswith("data:") and line[5:].strip():
                return json.loads(line[5:]), response.headers
        return {}, response.headers

    async def client(number: int, http: Any) -> None:
        nonlocal calls, shrunk
        params = {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "b", "version": "1"},
        }
        _, got = await post(http, {"id": 0, "method": "initialize", "params": params}, {})
        session = {"mcp-session-id": got["mcp-session-id"], "mcp-protocol-version": "2025-11-25"}
        await post(http, {"method": "notifications/initialized"}, session)
        for i in itertools.count(1):
            if time.monotonic() >= end:
                return
            args = {"key": f"c{number}-{i}-{time.monotonic_ns()}", "size": size}
            reply, _ = await post(
                http,
                {"id": i, "method": "tools/call", "params": {"name": "page", "arguments": args}},
                session,
            )
            calls += 1
            shrunk += "truncation" in (reply["result"].get("_meta") or {})

    async with httpx2.AsyncClient(timeout=30) as http, anyio.create_task_group() as tg:
        for number in range(clients):
            tg.start_soon(client, number, http)
    return calls, shrunk


def store_costs(port: int, size: int, n: int = 500) -> None:
    """What the Redis store adds to one shrunk call: one put and one dedup-index check, timed directly."""
    from mcpsqueeze.recovery._ids import new_response_id
    from mcpsqueeze.recovery._redis import RedisStore

    store = RedisStore(f"redis://127.0.0.1:{port}/1", 3600.0)
    original = json.dumps({"content": [{"type": "text", "text": "x" * size}]}).encode()
    ids = [new_response_id() for _ in range(n)]
    started = time.perf_counter()
    for rid in ids:
        store.put("bench", rid, original)
    put = (time.perf_counter() - started) / n
    started = time.perf_counter()
    for rid in ids:
        store.first_seen("bench", "s", rid, b'{"number": 1, "tool": "t", "chars": 1}')
    seen = (time.perf_counter() - started) / n
    print(f"Redis store, one thread: put {put * 1e6:.0f} us, dedup-index check {seen * 1e6:.0f} us "
          f"({len(original)}-byte originals, {n} each)")  # fmt: skip
    store.close()


def main() -> None:
    if sys.argv[1:] == ["--backend"]:
        backend()
        return
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--size", type=int, default=6000, help="characters per result (budget 2000)")
    args = parser.parse_args()
    import anyio

    redis_server = shutil.which("redis-server")
    assert redis_server, "apt-get install redis-server"
    with tempfile.TemporaryDirectory() as tmp:
        rport = free_port()
        redis_argv = [redis_server, "--port", str(rport), "--bind", "127.0.0.1", "--save", "", "--dir", tmp]
        with started(redis_argv, rport):
            base = redis_info(rport)
            for label, extra, size in (
                ("shrunk, Redis store", ["--recovery-url", f"redis://127.0.0.1:{rport}/0"], args.size),
                ("shrunk, memory only", [], args.size),
                ("passed through (small results)", ["--recovery-url", f"redis://127.0.0.1:{rport}/0"], 1000),
            ):
                port = free_port()
                argv = [sys.executable, "-m", "mcpsqueeze.cli", "wrap", "--transport", "streamable-http",
                        "--port", str(port), "--recovery", "memory", "--budget", "2000", *extra, "--",
                        sys.executable, os.path.abspath(__file__), "--backend"]  # fmt: skip
                with started(argv, port):
                    url = f"http://127.0.0.1:{port}/mcp"
                    anyio.run(drive, url, args.clients, 1.0, size)  # warm up: sessions, backends, imports
                    calls, shrunk = anyio.run(drive, url, args.clients, args.seconds, size)
                print(f"{label:32} {calls / args.seconds:7.1f} calls/s  ({shrunk}/{calls} shrunk, "
                      f"{args.clients} clients, {size}-char results)")  # fmt: skip
            after = redis_info(rport)
            keys = subprocess.run(
                ["redis-cli", "-p", str(rport), "EVAL",
                 "return #redis.call('KEYS', 'mcpsqueeze:{default}:o:*')", "0"],
                capture_output=True, text=True, check=True,
            ).stdout.strip()  # fmt: skip
            stored = subprocess.run(
                ["redis-cli", "-p", str(rport), "GET", "mcpsqueeze:{default}:bytes"],
                capture_output=True, text=True, check=True,
            ).stdout.strip()  # fmt: skip
            used = int(after["used_memory"]) - int(base["used_memory"])
            originals = int(keys)
            payload = int(stored or 0) / max(1, originals)
            per = used / max(1, originals)
            print(f"Redis: {originals} originals, used_memory +{used} bytes = {per:.0f} bytes per original "
                  f"of {payload:.0f} stored bytes ({per - payload:.0f} bytes overhead); "
                  f"used_memory_rss {after['used_memory_rss_human'].strip()}")  # fmt: skip
            store_costs(rport, args.size)  # after the memory figure: it stores originals of its own


if __name__ == "__main__":
    main()
