"""The real relay, in-process, between a raw agent end and a scripted backend, over in-memory pipes.

The agent side writes any bytes it likes and reads exactly the lines the relay wrote. The scripted backend
is a small honest MCP server whose tools misbehave on purpose (by name), so one harness serves both the
named repro tests and the fuzz suite.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import anyio
from jsonrpc_check import check_jsonrpc, strict_loads, valid_id

from mcpsqueeze.core import Session
from mcpsqueeze.core._pipeline import Pipeline
from mcpsqueeze.core._services import build_services
from mcpsqueeze.proxy import Relay
from mcpsqueeze.settings._settings import Settings
from mcpsqueeze.transports._memory_pipes import (
    MemoryByteReceive,
    MemoryByteSend,
    memory_line_channel,
    memory_pipe,
)

PROTOCOL = "2025-11-25"

__all__ = ["Backend", "Run", "check_jsonrpc", "deep", "run_relay", "strict_loads", "valid_id"]


def deep(depth: int) -> str:
    """A JSON array nested `depth` levels deep, as text."""
    return "[" * depth + "]" * depth


def line(message: dict[str, Any]) -> bytes:
    return json.dumps(message).encode() + b"\n"


def request(request_id: Any, method: str, params: Any = None) -> bytes:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if params is not None:
        message["params"] = params
    return line(message)


def call(request_id: Any, tool: str, **arguments: Any) -> bytes:
    return request(request_id, "tools/call", {"name": tool, "arguments": arguments})


INITIALIZE = request(
    0,
    "initialize",
    {"protocolVersion": PROTOCOL, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
)


@dataclass
class Backend:
    """A scripted stdio-like MCP backend. Tools (by name):

    echo(text) answers text · hang never answers · slow(text) answers after `release` is set ·
    garbage prints a non-JSON line first · deep(depth) answers nested `depth` deep (raw text) ·
    nan answers with a NaN inside · wrong_id answers an id it never got, then the right one ·
    twice answers twice · storm(n) sends n progress notifications first · big(size) answers size chars ·
    ask sends the agent a request (roots/list) with an odd id first · die exits mid-call ·
    raw(lines) writes the given lines (hex-encoded bytes) first.
    """

    received: list[dict[str, Any]] = field(default_factory=list)
    release: anyio.Event = field(default_factory=anyio.Event)
    lines_in: list[bytes] = field(default_factory=list)

    async def serve(self, receive: MemoryByteReceive, send: MemoryByteSend) -> None:
        from anyio.streams.buffered import BufferedByteReceiveStream

        buffered = BufferedByteReceiveStream(receive)
        async with anyio.create_task_group() as tg:
            while True:
                try:
                    raw = await buffered.receive_until(b"\n", 1 << 31)
                except (anyio.EndOfStream, anyio.IncompleteRead):
                    break
                self.lines_in.append(raw)
                try:
                    message = strict_loads(raw)
                except (ValueError, RecursionError):
                    continue
                self.received.append(message)
                if not isinstance(message, dict) or "method" not in message or "id" not in message:
                    continue
                if await self._answer(message, send, tg) == "die":
                    break
            tg.cancel_scope.cancel()
        await send.aclose()

    async def _answer(self, message: dict[str, Any], send: MemoryByteSend, tg: Any) -> str | None:
        mid, method = message["id"], message["method"]
        params = message.get("params") if isinstance(message.get("params"), dict) else {}
        assert isinstance(params, dict)

        async def out(data: bytes | dict[str, Any]) -> None:
            with anyio.CancelScope(shield=True):
                await send.send(data if isinstance(data, bytes) else line(data))

        def result(value: Any) -> dict[str, Any]:
            return {"jsonrpc": "2.0", "id": mid, "result": value}

        if method == "initialize":
            await out(
                result(
                    {
                        "protocolVersion": PROTOCOL,
                        "capabilities": {"tools": {}},
                        "serverInfo": {"name": "scripted", "version": "1"},
                    }
                )
            )
            return None
        if method == "tools/list":
            await out(result({"tools": [{"name": "echo", "inputSchema": {"type": "object"}}]}))
            return None
        if method != "tools/call":
            await out(result({}))
            return None
        tool = params.get("name")
        args = params.get("arguments") if isinstance(params.get("arguments"), dict) else {}
        assert isinstance(args, dict)
        text = {"content": [{"type": "text", "text": str(args.get("text", ""))}]}
        if tool == "hang":
            return None
        if tool == "slow":

            async def later() -> None:
                await self.release.wait()
                await out(result(text))

            tg.start_soon(later)
            return None
        if tool == "garbage":
            await out(b"this line is not JSON\n")
        elif tool == "deep":
            depth = int(args.get("depth", 10_000))
            await out(
                b'{"jsonrpc":"2.0","id":'
                + json.dumps(mid).encode()
                + b',"result":'
                + deep(depth).encode()
                + b"}\n"
            )
            return None
        elif tool == "nan":
            await out(b'{"jsonrpc":"2.0","id":' + json.dumps(mid).encode() + b',"result":{"x":NaN}}\n')
            return None
        elif tool == "wrong_id":
            await out({"jsonrpc": "2.0", "id": "never-sent", "result": {}})
            await out({"jsonrpc": "2.0", "id": [1, 2], "result": {}})
        elif tool == "twice":
            await out(result(text))
        elif tool == "storm":
            token = (params.get("_meta") or {}).get("progressToken", "tok")
            for i in range(int(args.get("n", 100))):
                await out(
                    {
                        "jsonrpc": "2.0",
                        "method": "notifications/progress",
                        "params": {"progressToken": token, "progress": i},
                    }
                )
        elif tool == "big":
            body = str(args.get("text", "")) + "x" * int(args.get("size", 100_000))
            text = {"content": [{"type": "text", "text": body}]}
        elif tool == "raw":  # the agent's call carries lines (hex) the backend writes before answering
            for chunk in args.get("lines", []):
                await out(bytes.fromhex(chunk) + b"\n")
        elif tool == "ask":
            await out({"jsonrpc": "2.0", "id": {"odd": True}, "method": "roots/list"})
        elif tool == "die":
            return "die"
        await out(result(text))
        return None


@dataclass
class Run:
    """What one relay session produced."""

    out: list[bytes]
    exit_code: int
    backend: Backend

    def messages(self) -> list[dict[str, Any]]:
        return [check_jsonrpc(raw) for raw in self.out]

    def responses(self) -> list[dict[str, Any]]:
        return [m for m in self.messages() if "method" not in m]

    def answers_to(self, request_id: Any) -> list[dict[str, Any]]:
        key = (type(request_id), request_id)
        return [m for m in self.responses() if (type(m.get("id")), m.get("id")) == key]


def settings(**overrides: Any) -> Settings:
    values: dict[str, Any] = {"target": ["scripted"], "recovery": "memory", "retention": None}
    values.update(overrides)
    return Settings.make(**values)


async def run_relay(
    agent: Callable[[MemoryByteSend, MemoryByteReceive, Backend], Awaitable[None]] | list[bytes],
    *,
    timeout: float | None = None,
    drain_grace: float = 5.0,
    backend: Backend | None = None,
    stages: list[Any] | None = None,
    **setting_overrides: Any,
) -> Run:
    """Run a relay session; `agent` is a list of lines (sent, then stdin closes) or a coroutine.

    `stages` replaces the session's result stages (dedup, shrink) with the given ones."""
    backend = backend or Backend()
    cfg = settings(timeout=timeout, **setting_overrides)
    services = build_services(cfg)
    session = Session(cfg, services)
    if stages is not None:
        session.pipeline = Pipeline(stages, services.accountant)
    to_relay, relay_in = memory_pipe()
    relay_out, from_relay = memory_pipe()
    to_back, back_in = memory_pipe()
    back_out, from_back = memory_pipe()
    front = memory_line_channel(relay_in, relay_out)
    back = memory_line_channel(from_back, to_back)
    relay = Relay(front, back, session, drain_grace=drain_grace)
    code = -1
    try:
        with anyio.fail_after(60):
            async with anyio.create_task_group() as tg:
                tg.start_soon(backend.serve, back_in, back_out)

                async def drive() -> None:
                    if isinstance(agent, list):
                        for data in agent:
                            await to_relay.send(data)
                    else:
                        await agent(to_relay, from_relay, backend)
                    await to_relay.aclose()

                tg.start_soon(drive)
                code = await relay.run()
                await back.aclose()
                await relay_out.aclose()
                tg.cancel_scope.cancel()
    finally:
        services.accountant.close()
    out: list[bytes] = []
    buffered = b""
    while True:
        try:
            buffered += from_relay.receive_nowait()
        except (anyio.WouldBlock, anyio.EndOfStream, anyio.ClosedResourceError):
            break
    out = [raw for raw in buffered.split(b"\n") if raw.strip()]
    return Run(out, code, backend)


async def read_message(receive: MemoryByteReceive, pending: list[bytes]) -> dict[str, Any]:
    """The next message the relay wrote to the agent (`pending` keeps partial data between calls)."""
    while b"\n" not in (pending[0] if pending else b""):
        chunk = await receive.receive()
        pending[:] = [(pending[0] if pending else b"") + chunk]
    head, _, rest = pending[0].partition(b"\n")
    pending[:] = [rest]
    return check_jsonrpc(head)
