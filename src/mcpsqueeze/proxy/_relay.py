"""The relay: one agent connection <-> one backend connection, message for message.

Everything passes through unchanged except: tools/call results (through the pipeline), tools/list
(gains the recover tool), calls of the recover tool (answered here, never forwarded), and the errors the
proxy itself must give (backend gone, timeout, malformed input).
"""

from __future__ import annotations

import contextlib
import re
import sys
import time
from dataclasses import dataclass, field
from typing import Any

import anyio
import anyio.abc

from .._errors import RecoveryError, UsageError
from ..pipeline import Call, Pipeline
from ..recovery import RESPONSE_ID_RE, recover_result
from ..services import SessionServices
from ._channels import Channel, ChannelClosed, Invalid, Message, ProcessChannel

__all__ = ["BACKEND_GONE", "TIMEOUT", "Relay", "recover_call", "recover_tool_definition"]

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
INVALID_PARAMS = -32602
BACKEND_GONE = -32000  # implementation-defined server error range
TIMEOUT = -32001
NEW_ENVELOPE = "2026-07-28"
FULL_META_KEY = "mcpsqueeze/full"


def recover_tool_definition(name: str) -> dict[str, Any]:
    return {
        "name": name,
        "title": "Recover an original result",
        "description": (
            "Return the complete original of a tool result that mcpsqueeze shrank or deduplicated. "
            "Give the response_id from the truncation notice. For a large original, read one part: "
            "'pointer' is an RFC 6901 JSON pointer into the original JSON (e.g. /issues/17), and "
            "'offset'/'length' select a window of characters of the original (or of the pointed part). "
            "Never re-runs the tool."
        ),
        "inputSchema": {
            "type": "object",
            "properties": {
                "response_id": {"type": "string", "description": "32 hex characters from the notice"},
                "pointer": {"type": "string", "description": "RFC 6901 JSON pointer, e.g. /issues/17"},
                "offset": {"type": "integer", "minimum": 0, "description": "first character of the window"},
                "length": {"type": "integer", "minimum": 1, "description": "characters in the window"},
            },
            "required": ["response_id"],
            "additionalProperties": False,
        },
        "annotations": {"readOnlyHint": True, "idempotentHint": True, "openWorldHint": False},
    }


def _error(request_id: Any, code: int, message: str, data: Any = None) -> Message:
    err: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        err["data"] = data
    return {"jsonrpc": "2.0", "id": request_id, "error": err}


def _key(request_id: Any) -> tuple[str, Any]:
    # JSON-RPC ids 1 and "1" are different requests.
    return (type(request_id).__name__, request_id)


@dataclass
class _Pending:
    method: str
    request: Message
    call: Call | None = None
    watchdog: anyio.CancelScope | None = None
    started: float = field(default_factory=time.perf_counter)


class Relay:
    def __init__(
        self,
        front: Channel,
        back: Channel | None,
        pipeline: Pipeline,
        services: SessionServices,
        *,
        recover_tool: str | None,
        dead_reason: str | None = None,
    ) -> None:
        self.front = front
        self.back = back
        self.pipeline = pipeline
        self.services = services
        self.recover_tool = recover_tool  # None: pure passthrough, no extra tool
        self.dead_reason = dead_reason if back is not None else (dead_reason or "no backend")
        self.exit_code = 0 if back is not None else 3
        self._pending: dict[tuple[str, Any], _Pending] = {}
        self._timed_out: set[tuple[str, Any]] = set()
        self._calls = 0
        self._backend_spoke = False
        self._protocol: str | None = None
        self._tg: anyio.abc.TaskGroup | None = None
        self._progress: dict[Any, Any] = {}  # progressToken -> request id, to route progress over HTTP

    # -- lifecycle -------------------------------------------------------------------------------------

    async def run(self) -> int:
        """Relay until the agent disconnects (or the backend fails before ever answering)."""
        async with anyio.create_task_group() as tg:
            self._tg = tg
            if self.back is not None:
                tg.start_soon(self._pump_back)
            await self._pump_front()
            tg.cancel_scope.cancel()
        return self.exit_code

    async def _pump_front(self) -> None:
        while True:
            try:
                message = await self.front.receive()
            except ChannelClosed:
                return
            if isinstance(message, Invalid):
                code = PARSE_ERROR if message.error.startswith("Parse error") else INVALID_REQUEST
                await self._to_front(_error(message.id, code, message.error))
            elif "method" in message and "id" in message:
                await self._front_request(message)
            elif "method" in message:
                await self._front_notification(message)
            else:
                await self._to_back(message)  # the agent answering a backend's request (sampling, roots...)
            if self.exit_code and not self._backend_spoke and self.dead_reason:
                return  # the backend failed at start: nothing to serve

    async def _pump_back(self) -> None:
        assert self.back is not None
        while True:
            try:
                message = await self.back.receive()
            except ChannelClosed:
                await self._backend_gone()
                return
            self._backend_spoke = True
            if isinstance(message, Invalid):
                print(f"mcpsqueeze: malformed message from the backend: {message.error}", file=sys.stderr)
                await self._to_back(_error(message.id, PARSE_ERROR, message.error))
            elif "method" in message:
                await self._to_front(message)  # backend requests and notifications go to the agent as is
            else:
                await self._back_response(message)

    async def _backend_gone(self) -> None:
        reason = "the backend closed the connection"
        if isinstance(self.back, ProcessChannel):
            with anyio.move_on_after(1):
                await self.back.process.wait()
            reason = self.back.describe_exit()
        started = "before answering anything" if not self._backend_spoke else "mid-session"
        self.dead_reason = f"{reason} {started}"
        self.exit_code = 3
        print(f"mcpsqueeze: {self.dead_reason}; later calls get an error", file=sys.stderr)
        for key, pending in list(self._pending.items()):
            self._pending.pop(key, None)
            if pending.watchdog is not None:
                pending.watchdog.cancel()
            await self._to_front(self._gone_error(pending.request["id"], pending.method))
        if not self._backend_spoke:
            # Failing at start: tell the agent's pending requests, then stop serving.
            assert self._tg is not None
            self._tg.cancel_scope.cancel()

    def _gone_error(self, request_id: Any, method: str) -> Message:
        return _error(
            request_id,
            BACKEND_GONE,
            f"mcpsqueeze: the backend server is not running ({self.dead_reason}); {method} was not answered. "
            "Restart the MCP server (check its stderr for the cause).",
        )

    # -- agent -> backend ------------------------------------------------------------------------------

    async def _front_request(self, message: Message) -> None:
        method = message["method"]
        request_id = message["id"]
        params = message.get("params")
        if not isinstance(params, dict):
            params = {}
        if method == "tools/call" and self.recover_tool and params.get("name") == self.recover_tool:
            assert self._tg is not None
            meta = params.get("_meta")
            modern = isinstance(meta, dict) and "io.modelcontextprotocol/protocolVersion" in meta
            self._tg.start_soon(self._answer_recover, request_id, params.get("arguments") or {}, modern)
            return
        if self.dead_reason is not None:
            await self._to_front(self._gone_error(request_id, method))
            return
        pending = _Pending(method, message)
        if method == "tools/call":
            self._calls += 1
            meta = params.get("_meta")
            arguments = params.get("arguments")
            pending.call = Call(
                server=self.services.server_name,
                tool=str(params.get("name")),
                arguments=arguments if isinstance(arguments, dict) else {},
                number=self._calls,
                full=isinstance(meta, dict) and meta.get(FULL_META_KEY) is True,
            )
        key = _key(request_id)
        self._pending[key] = pending
        meta = params.get("_meta")
        if isinstance(meta, dict) and "progressToken" in meta:
            self._progress[meta["progressToken"]] = request_id
        if self.services.timeout:
            assert self._tg is not None
            pending.watchdog = anyio.CancelScope()
            self._tg.start_soon(self._watch, key, pending, self.services.timeout)
        await self._to_back(self._for_backend(message))

    def _for_backend(self, message: Message) -> Message:
        """Strip 2026-07-28 envelope keys when the backend negotiated an older protocol."""
        params = message.get("params")
        if self._protocol is None or self._protocol >= NEW_ENVELOPE or not isinstance(params, dict):
            return message
        meta = params.get("_meta")
        if not isinstance(meta, dict) or not any(k.startswith("io.modelcontextprotocol/") for k in meta):
            return message
        meta = {k: v for k, v in meta.items() if not k.startswith("io.modelcontextprotocol/")}
        return {**message, "params": {**params, "_meta": meta}}

    async def _front_notification(self, message: Message) -> None:
        if message["method"] == "notifications/cancelled":
            params = message.get("params")
            if isinstance(params, dict) and "requestId" in params:
                pending = self._pending.pop(_key(params["requestId"]), None)
                if pending is not None and pending.watchdog is not None:
                    pending.watchdog.cancel()
        if self.dead_reason is None:
            await self._to_back(self._for_backend(message))

    async def _watch(self, key: tuple[str, Any], pending: _Pending, timeout: float) -> None:
        assert pending.watchdog is not None
        with pending.watchdog:
            await anyio.sleep(timeout)
            if self._pending.get(key) is not pending:
                return
            del self._pending[key]
            self._timed_out.add(key)
            request_id = pending.request["id"]
            what = pending.method + (f" ({pending.call.tool})" if pending.call else "")
            await self._to_front(
                _error(
                    request_id,
                    TIMEOUT,
                    f"mcpsqueeze: the backend did not answer {what} within {timeout:g} s; the request was "
                    "cancelled and the proxy keeps serving. Retry, narrow the request, or raise --timeout.",
                )
            )
            await self._to_back(
                {
                    "jsonrpc": "2.0",
                    "method": "notifications/cancelled",
                    "params": {
                        "requestId": request_id,
                        "reason": f"timed out after {timeout:g} s (mcpsqueeze)",
                    },
                }
            )

    # -- backend -> agent ------------------------------------------------------------------------------

    async def _back_response(self, message: Message) -> None:
        key = _key(message.get("id"))
        pending = self._pending.pop(key, None)
        if pending is None:
            if key in self._timed_out:
                self._timed_out.discard(key)
                return  # already answered with a timeout error
            await self._to_front(message)
            return
        if pending.watchdog is not None:
            pending.watchdog.cancel()
        result = message.get("result")
        if not isinstance(result, dict):
            await self._to_front(message)
        elif pending.call is not None:
            assert self._tg is not None
            self._tg.start_soon(self._present, pending.call, message, result)
        elif pending.method == "tools/list":
            await self._to_front(self._with_recover_tool(message, result))
        else:
            if pending.method == "initialize" and isinstance(result.get("protocolVersion"), str):
                self._protocol = result["protocolVersion"]
            await self._to_front(message)

    def _with_recover_tool(self, message: Message, result: dict[str, Any]) -> Message:
        tools = result.get("tools")
        if not self.recover_tool or not isinstance(tools, list) or result.get("nextCursor"):
            return message
        names = {t.get("name") for t in tools if isinstance(t, dict)}
        name = "squeeze_recover"
        suffix = 1
        while name in names:
            suffix += 1
            name = f"squeeze_recover_{suffix}"
        self.recover_tool = name
        for stage in self.pipeline.stages:
            if getattr(stage, "recover_tool", None) is not None:  # MCP-mode stages name the tool
                stage.recover_tool = name  # type: ignore[attr-defined]
        return {**message, "result": {**result, "tools": [*tools, recover_tool_definition(name)]}}

    async def _present(self, call: Call, message: Message, result: dict[str, Any]) -> None:
        presented, _ = await self.pipeline.present(call, result)
        await self._to_front(message if presented is result else {**message, "result": presented})

    async def _answer_recover(self, request_id: Any, arguments: Any, modern: bool = False) -> None:
        try:
            result = await self.services.workers.run(self._recover, arguments)
        except (RecoveryError, UsageError) as exc:
            result = {"content": [{"type": "text", "text": f"mcpsqueeze: {exc}"}], "isError": True}
        if modern:  # a 2026-07-28 client requires the result's type
            result = {**result, "resultType": "complete"}
        await self._to_front({"jsonrpc": "2.0", "id": request_id, "result": result})

    def _recover(self, arguments: Any) -> dict[str, Any]:
        return recover_call(self.services, arguments)

    # -- sending ---------------------------------------------------------------------------------------

    async def _to_front(self, message: Message) -> None:
        related = None
        if message.get("method") == "notifications/progress":
            params = message.get("params")
            if isinstance(params, dict):
                related = self._progress.get(params.get("progressToken"))
        elif "id" in message and "method" not in message:
            for token in [t for t, rid in self._progress.items() if rid == message["id"]]:
                del self._progress[token]
        with contextlib.suppress(ChannelClosed):  # the agent is gone; _pump_front ends the relay
            await self.front.send(message, related)

    async def _to_back(self, message: Message) -> None:
        if self.back is None or self.dead_reason is not None:
            return
        with contextlib.suppress(ChannelClosed):  # _pump_back notices the closed backend and reports it
            await self.back.send(message)


def recover_call(services: SessionServices, arguments: Any) -> dict[str, Any]:
    """Answer a recover-tool call from the store (shared by the session relay and the stateless path)."""
    if services.store is None:
        raise RecoveryError("this proxy keeps no originals (--no-shrink and --no-dedup)")
    if not isinstance(arguments, dict):
        raise UsageError("arguments must be an object with response_id")
    response_id = arguments.get("response_id")
    if not isinstance(response_id, str) or not re.fullmatch(RESPONSE_ID_RE, response_id):
        raise UsageError("response_id must be the 32 hex characters shown in the truncation notice")
    pointer = arguments.get("pointer")
    offset = arguments.get("offset")
    length = arguments.get("length")
    if pointer is not None and not isinstance(pointer, str):
        raise UsageError("pointer must be a string such as /issues/17")
    for name, value in (("offset", offset), ("length", length)):
        if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value < 0):
            raise UsageError(f"{name} must be a non-negative integer")
    original = services.store.load(response_id)
    return recover_result(original, pointer, offset, length)
