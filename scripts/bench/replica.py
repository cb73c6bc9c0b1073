"""Capacity of one replica: ``wrap --transport streamable-http`` on a loopback port, its originals in a
Redis on another (a redis-server started here), driven for a fixed time by concurrent sessions of raw
HTTP clients with one call in flight each; the backend is the stdlib ``mcpsqueeze.demo.bulk`` server,
every call a fresh JSON result. Cases: shrunk to a 2,000-character budget with the Redis store, the same
with memory only, and results under the budget passed through. Per case: calls per second and each
call's latency; then Redis memory per stored original.
"""

from __future__ import annotations

import argparse
import contextlib
import http.client
import json
import shutil
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ._harness import Tree, progress, spread


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--seconds", type=float, default=10.0, help="seconds of calls per case (default 10)")
    parser.add_argument("--clients", type=int, default=8, help="concurrent sessions (default 8)")
    parser.add_argument("--size", type=int, default=6000, help="characters of a shrunk result (default 6000)")


def _port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextlib.contextmanager
def _listening(argv: list[str], port: int, env: dict[str, str] | None = None) -> Iterator[None]:
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    try:
        for _ in range(1200):
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=0.2):
                break
            time.sleep(0.05)
        yield
    finally:
        proc.terminate()
        proc.wait(15)


def _post(conn: http.client.HTTPConnection, body: dict[str, Any], session: dict[str, str]) -> tuple[Any, Any]:
    """One JSON-RPC message; its answer (a JSON body or the first SSE event) and the response headers."""
    headers = {"accept": "application/json, text/event-stream", "content-type": "application/json", **session}
    conn.request("POST", "/mcp", json.dumps({"jsonrpc": "2.0", **body}), headers)
    response = conn.getresponse()
    text = response.read().decode()
    events = [line[5:] for line in text.splitlines() if line.startswith("data:") and line[5:].strip()]
    return (json.loads(events[0] if events else text) if text.strip() else {}), response.headers


def _drive(port: int, clients: int, seconds: float, size: int) -> tuple[list[float], int]:
    """Each call's milliseconds and how many were shrunk, over ``seconds`` of ``clients`` sessions."""
    times: list[float] = []
    shrunk = [0]
    end = time.monotonic() + seconds

    def client(number: int) -> None:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        hello = {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "bench", "version": "1"},
        }
        _, headers = _post(conn, {"id": 0, "method": "initialize", "params": hello}, {})
        session = {"mcp-session-id": headers["mcp-session-id"], "mcp-protocol-version": "2025-11-25"}
        _post(conn, {"method": "notifications/initialized"}, session)
        call = 0
        while time.monotonic() < end:
            call += 1
            arguments = {"size": size, "seed": number * 10**7 + call}
            started = time.perf_counter()
            answer, _ = _post(
                conn,
                {"id": call, "method": "tools/call", "params": {"name": "blob", "arguments": arguments}},
                session,
            )
            times.append((time.perf_counter() - started) * 1000)
            shrunk[0] += "truncation" in (answer["result"].get("_meta") or {})

    threads = [threading.Thread(target=client, args=(n,)) for n in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return times, shrunk[0]


def _redis(port: int, *command: str) -> str:
    return subprocess.run(
        ["redis-cli", "-p", str(port), *command], capture_output=True, text=True, check=True
    ).stdout


def run(args: argparse.Namespace, trees: list[Tree], workdir: Path) -> dict[str, Any]:
    server = shutil.which("redis-server")
    if server is None:
        raise SystemExit("redis-server is not installed (apt-get install redis-server)")
    figures: dict[str, Any] = {}
    redis = _port()
    with _listening(
        [server, "--port", str(redis), "--bind", "127.0.0.1", "--save", "", "--dir", str(workdir)], redis
    ):

        def used() -> int:
            return int(
                next(x for x in _redis(redis, "INFO", "memory").splitlines() if x.startswith("used_memory:"))[
                    12:
                ]
            )

        before = used()
        store = ["--recovery-url", f"redis://127.0.0.1:{redis}/0"]
        for tree in trees:
            for case, extra, size in (
                ("shrunk, originals in Redis", store, args.size),
                ("shrunk, memory only", [], args.size),
                ("passed through", store, 1000),
            ):
                port = _port()
                wrap = ["wrap", "--transport", "streamable-http", "--port", str(port), "--recovery", "memory"]
                argv = tree.mcpsqueeze(
                    *wrap, "--budget", "2000", *extra, "--", sys.executable, "-m", "mcpsqueeze.demo.bulk"
                )
                with _listening(argv, port, tree.env()):
                    _drive(port, args.clients, 1.0, size)  # sessions, backends and imports warmed up
                    times, shrunk = _drive(port, args.clients, args.seconds, size)
                figures[f"{case} ({tree.label})"] = {
                    "calls/s": round(len(times) / args.seconds, 1),
                    "call ms": spread(times),
                    "shrunk": f"{shrunk}/{len(times)}",
                }
                progress(f"{case} through {tree.label}: done")
        originals = int(_redis(redis, "EVAL", "return #redis.call('KEYS', 'mcpsqueeze:*:o:*')", "0").strip())
        figures["Redis bytes per original"] = round((used() - before) / max(1, originals))
        figures["result size"] = args.size
    return figures
