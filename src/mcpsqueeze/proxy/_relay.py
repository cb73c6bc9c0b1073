"""The relay: one agent connection <-> one backend connection, message for message.

Everything passes through unchanged except: tools/call results (through the pipeline), tools/list
(gains the recover tool), calls of the recover tool (answered here, never forwarded), and the errors the
proxy itself must give (backend gone, timeout, malformed input). With `--compress-tools`, tools/list is
the compressed listing and its frontend tools are answered here or become the real call
(`_compressed_front.py`).

Request ids are the one thing rewritten on the way: the backend sees ids the proxy owns (1, 2, 3...) and
each answer gets the agent's own id back. So an answer that comes after a timeout, a cancellation or the
end of the drain can never reach a later request that reuses the id, two concurrent requests with one id
each get their own answer, and an id the backend makes up is dropped, never forwarded.
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import logging
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import anyio
import anyio.abc

from .._errors import BackendError, MCPSqueezeError
from .._results import text_chars, text_of
from ..core import Call, CompressedTools, Invoke, Pipeline, SessionServices, large_invoke
from ..core._clients import ClientProfile, choose, client_info_of
from ..transports import (
    BACKEND_GONE,
    INVALID_REQUEST,
    PARSE_ERROR,
    TIMEOUT,
    UNREADABLE,
    Channel,
    ChannelClosed,
    Invalid,
    Message,
    ProcessChannel,
    error_response,
    list_tools,
    unreadable_answer,
    valid_id,
    with_id,
)
from ._compressed_front import NOT_FOUND, CompressedFront, invoke_message
from ._own_tools import answer_recover, shaped_listing, with_recover_tool

__all__ = ["BACKEND_GONE", "FULL_META_KEY", "TIMEOUT", "UNREADABLE", "Relay"]

logger = logging.getLogger("mcpsqueeze.proxy")

START_FAILURE_GRACE = 5.0  # seconds a backend that failed at start still has its requests answered
FLUSH_SECONDS = 30.0  # after the drain, at most this long to write the last answers
NEW_ENVELOPE = "2026-07-28"
FULL_META_KEY = "mcpsqueeze/full"


# Results with fewer characters of content than this are presented inline by `_pump_back`: every stage
# runs them on the event loop (stages.py's inline limits are higher), so a task of their own bought
# nothing but its start (~10 us) and a turn of the event loop.
_INLINE_PRESENT = 32 * 1024


def _key(request_id: Any) -> tuple[str, Any]:
    # JSON-RPC ids 1 and "1" are different requests.
    return (type(request_id).__name__, request_id)


@dataclass
class _Waiter:
    """A request of the proxy's own (the compressed listing's tools/list): its answer comes back here."""

    done: anyio.Event = field(default_factory=anyio.Event)
    answer: Message | None = None


@dataclass
class _Pending:
    method: str
    request: Message  # as the agent sent it, with the agent's id
    call: Call | None = None
    waiter: _Waiter | None = None  # the proxy's own request: answered to it, not to the agent
    watchdog: anyio.CancelScope | None = None
    started: float = field(default_factory=time.perf_counter)
    progress: tuple[str, Any] | None = None  # the key of its progressToken in Relay._progress

    @property
    def what(self) -> str:
        return self.method + (f" ({self.call.tool})" if self.call else "")


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
        drain_grace: float = 10.0,
        start_failure_grace: float = START_FAILURE_GRACE,
        compressed: CompressedFront | None = None,
    ) -> None:
        self.front = front
        self.back = back
        self.pipeline = pipeline
        self.services = services
        self.recover_tool = recover_tool  # None: pure passthrough, no extra tool
        self.compressed = compressed  # --compress-tools: the compressed listing of this backend connection
        self.drain_grace = drain_grace  # after the agent closes its input, how long pending requests get
        self.start_failure_grace = start_failure_grace
        self.dead_reason = dead_reason if back is not None else (dead_reason or "no backend")
        self.exit_code = 0 if back is not None else 3
        self._pending: dict[int, _Pending] = {}  # by the id the backend saw
        self._abandoned: set[int] = set()  # answered already (timeout, cancel, drain): late answers dropped
        self._ids = itertools.count(1)
        self._busy = 0  # answers being written or presented: the drain waits for them
        self._settled: anyio.Event | None = None
        self._calls = 0
        self._backend_spoke = False
        self._protocol: str | None = None
        self._tg: anyio.abc.TaskGroup | None = None
        self._progress: dict[tuple[str, Any], Any] = {}  # progressToken -> agent's request id (HTTP routing)
        # The profile of the client on the other end (core/_clients.py), chosen at its `initialize`
        self.client: ClientProfile | None = choose(services.client, None).profile
        # Small results are presented inline (no task of their own) unless a stage may wait on a network
        # store (Redis): then the backend's next messages must not wait behind it.
        store = services.store
        self._inline = store is None or not store.remote

    # -- lifecycle -------------------------------------------------------------------------------------

    def _choose_client(self, params: Any) -> None:
        """The session's client profile, from the clientInfo of its `initialize` (or the setting)."""
        selection = choose(self.services.client, client_info_of(params))
        self.client = selection.profile
        logger.info("mcpsqueeze: %s", selection.describe())

    async def run(self) -> int:
        """Relay until the agent disconnects (or the backend fails before ever answering)."""
        async with anyio.create_task_group() as tg:
            self._tg = tg
            if self.back is not None:
                tg.start_soon(self._pump_back)
            await self._pump_front()
            await self._drain()
            tg.cancel_scope.cancel()
        return self.exit_code

    async def _drain(self) -> None:
        """The agent closed its input: answers still on their way are delivered, within a grace period."""
        grace = self.services.timeout or self.drain_grace
        with anyio.move_on_after(grace):
            while self._pending:
                await self._changed()
        # Then flush: the expiry errors, and results the backend gave that are still being presented. Bounded
        # apart from the grace (a short grace must not cut a shrink in progress), so that an agent that
        # stopped reading its stdout cannot keep the proxy alive either.
        with anyio.move_on_after(FLUSH_SECONDS):
            for backend_id in list(self._pending):
                pending = self._take(backend_id, abandon=True)
                if pending is not None:
                    with self._working():
                        await self._reply(
                            pending,
                            _timed_out(
                                pending,
                                f"the agent closed its input and the backend did not answer {pending.what} "
                                f"within {grace:g} s after that; the request was cancelled.",
                            ),
                        )
                        await self._cancel_in_backend(backend_id, "the agent closed its input (mcpsqueeze)")
            while self._busy:  # results the backend already gave, still being presented or written
                await self._changed()

    async def _changed(self) -> None:
        self._settled = anyio.Event()
        await self._settled.wait()

    def _notify(self) -> None:
        if self._settled is not None:
            self._settled.set()

    @contextlib.contextmanager
    def _working(self) -> Iterator[None]:
        """An answer is being produced: the drain must not end the relay under it."""
        self._busy += 1
        try:
            yield
        finally:
            self._busy -= 1
            self._notify()

    def _take(self, backend_id: Any, *, abandon: bool = False) -> _Pending | None:
        """Remove a pending request (it is being answered now); None when the id is not ours.

        `abandon`: answered without the backend's answer, which may still come and is then dropped.
        """
        if type(backend_id) is not int:
            return None
        pending = self._pending.pop(backend_id, None)
        if pending is not None:
            if pending.call is not None:  # (taken busy when it was forwarded)
                self.services.accountant.busy(-1)
            if abandon:
                self._abandoned.add(backend_id)
            if pending.progress is not None:
                self._progress.pop(pending.progress, None)
            if pending.watchdog is not None:
                pending.watchdog.cancel()
            self._notify()
        return pending

    async def _pump_front(self) -> None:
        while True:
            try:
                message = await self.front.receive()
            except ChannelClosed:
                return
            if isinstance(message, Invalid):
                code = PARSE_ERROR if message.error.startswith("Parse error") else INVALID_REQUEST
                await self._to_front(error_response(message.id, code, message.error))
            elif "method" in message and "id" in message:
                await self._front_request(message)
            elif "method" in message:
                await self._front_notification(message)
            else:
                await self._to_back(message)  # the agent answering a backend's request (sampling, roots...)
            if self.back is None and self.dead_reason:
                return  # no backend could be opened: the first message is answered, nothing else to serve

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
                await self._back_invalid(message)
            elif "method" in message:
                if message["method"] == "notifications/tools/list_changed" and self.compressed is not None:
                    self.compressed.changed()  # the next compressed answer lists the tools again
                await self._to_front(message)  # backend requests and notifications go to the agent as is
            else:
                await self._back_response(message)

    async def _back_invalid(self, message: Invalid) -> None:
        """A line from the backend that is not JSON-RPC: when it answers one of ours, answer the agent."""
        pending = self._take(message.id)
        if pending is None:
            logger.warning(f"mcpsqueeze: malformed message from the backend: {message.error}")
            code = PARSE_ERROR if message.error.startswith("Parse error") else INVALID_REQUEST
            await self._to_back(error_response(None, code, message.error))
            return
        logger.warning(
            "mcpsqueeze: the backend's answer to %s could not be read: %s", pending.what, message.error
        )
        with self._working():
            await self._reply(pending, unreadable_answer(pending.request["id"], pending.what, message.error))

    async def _backend_gone(self) -> None:
        reason = "the backend closed the connection"
        if isinstance(self.back, ProcessChannel):
            with anyio.move_on_after(1):
                await self.back.wait()
            reason = self.back.describe_exit()
        started = "before answering anything" if not self._backend_spoke else "mid-session"
        self.dead_reason = f"{reason} {started}"
        self.exit_code = 3
        logger.warning(f"mcpsqueeze: {self.dead_reason}; later calls get an error")
        with self._working():
            for backend_id in list(self._pending):
                pending = self._take(backend_id)
                if pending is not None:
                    await self._reply(pending, self._gone_error(pending.request["id"], pending.method))
        if not self._backend_spoke:
            # Failing at start: requests already sent or arriving soon still get their error, then stop.
            await anyio.sleep(self.start_failure_grace)
            assert self._tg is not None
            self._tg.cancel_scope.cancel()

    def _gone_error(self, request_id: Any, method: str) -> Message:
        return error_response(
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
        if (
            self.compressed is not None
            and self.dead_reason is None
            and self._compressed_request(message, params)
        ):
            return
        if method == "tools/call" and self.recover_tool and params.get("name") == self.recover_tool:
            assert self._tg is not None
            self._busy += 1  # released by _answer_recover
            meta = params.get("_meta")
            modern = isinstance(meta, dict) and "io.modelcontextprotocol/protocolVersion" in meta
            self._tg.start_soon(self._answer_recover, request_id, params.get("arguments") or {}, modern)
            return
        if self.dead_reason is not None:
            await self._to_front(self._gone_error(request_id, method))
            return
        call = None
        if method == "initialize":
            self._choose_client(params)
        if method == "tools/call":
            self._calls += 1
            meta = params.get("_meta")
            arguments = params.get("arguments")
            call = Call(
                server=self.services.server_name,
                tool=str(params.get("name")),
                arguments=arguments if isinstance(arguments, dict) else {},
                number=self._calls,
                full=isinstance(meta, dict) and meta.get(FULL_META_KEY) is True,
                client=None if self.client is None else self.client.for_call(meta),
            )
            if call.full:  # answered from the store, or run: decided off the agent's pump
                self._spawn(functools.partial(self._full_call, call), message)
                return
        await self._forward(message, call)

    async def _full_call(self, call: Call, message: Message) -> None:
        """`full`: the stored original of this same call, or the error for a tool with side effects,
        without the backend running it; else the call goes on and its result is shown unshrunk."""
        answer = await self.pipeline.full(call, functools.partial(self._tool_entry, message, call.tool))
        if answer is None:
            await self._forward(message, call)
        else:
            await self._to_front(
                _modern(message, {"jsonrpc": "2.0", "id": message["id"], "result": answer[0]})
            )

    async def _tool_entry(self, message: Message, name: str) -> dict[str, Any] | None:
        """The backend's tools/list entry of `name` (its annotations), freshly listed; None when it is not
        listed or the backend does not list."""
        ask = self._asking_as(message)

        async def result_of(method: str, params: dict[str, Any]) -> Any:
            return (await ask(method, params)).get("result")

        try:
            listed = await list_tools(result_of)
        except BackendError:
            return None
        return next((t for t in listed if t["name"] == name), None)

    async def _forward(self, message: Message, call: Call | None) -> None:
        """Send the agent's request on to the backend, under an id of ours; its answer finds it pending."""
        method = message["method"]
        request_id = message["id"]
        if self.dead_reason is not None:  # (gone while a `full` call was being decided)
            await self._to_front(self._gone_error(request_id, method))
            return
        params = message.get("params")
        if not isinstance(params, dict):
            params = {}
        backend_id = next(self._ids)
        pending = _Pending(method, message, call)
        if call is not None:
            # The agent waits while the backend works: token counting (the helper's CPU) waits too,
            # off the cores the backend needs, until the call is answered (`_take`).
            self.services.accountant.busy(+1)
        self._pending[backend_id] = pending
        meta = params.get("_meta")
        if isinstance(meta, dict) and valid_id(meta.get("progressToken")):  # else forwarded, not routed
            pending.progress = _key(meta["progressToken"])
            self._progress[pending.progress] = request_id
        self._watch_soon(backend_id, pending)
        why = await self._to_back(self._for_backend({**message, "id": backend_id}))
        if why is not None and self._take(backend_id) is not None:
            await self._to_front(
                error_response(request_id, INVALID_REQUEST, f"mcpsqueeze: cannot forward {method}: {why}")
            )

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
            # The backend knows the request by our id: cancel each pending request with the agent's id.
            # An unknown or invalid requestId is dropped: forwarded, it could name another request of ours.
            params = message.get("params")
            cancelled = params.get("requestId") if isinstance(params, dict) else None
            if not valid_id(cancelled):
                return
            for backend_id, pending in list(self._pending.items()):
                if _key(pending.request["id"]) == _key(cancelled) and self._take(backend_id, abandon=True):
                    assert isinstance(params, dict)
                    await self._to_back(
                        self._for_backend({**message, "params": {**params, "requestId": backend_id}})
                    )
            return
        if self.dead_reason is None:
            await self._to_back(self._for_backend(message))

    async def _cancel_in_backend(self, backend_id: int, reason: str) -> None:
        await self._to_back(
            {
                "jsonrpc": "2.0",
                "method": "notifications/cancelled",
                "params": {"requestId": backend_id, "reason": reason},
            }
        )

    def _watch_soon(self, backend_id: int, pending: _Pending) -> None:
        """With --timeout, start the request's watchdog."""
        if self.services.timeout:
            assert self._tg is not None
            pending.watchdog = anyio.CancelScope()
            self._tg.start_soon(self._watch, backend_id, pending, self.services.timeout)

    async def _watch(self, backend_id: int, pending: _Pending, timeout: float) -> None:
        assert pending.watchdog is not None
        with pending.watchdog:
            await anyio.sleep(timeout)
        if pending.watchdog.cancel_called or self._pending.get(backend_id) is not pending:
            return  # answered (or cancelled) in time
        self._take(backend_id, abandon=True)
        with self._working():
            await self._reply(
                pending,
                _timed_out(
                    pending,
                    f"the backend did not answer {pending.what} within {timeout:g} s; the request was "
                    "cancelled and the proxy keeps serving. Retry, narrow the request, or raise --timeout.",
                ),
            )
            await self._cancel_in_backend(backend_id, f"timed out after {timeout:g} s (mcpsqueeze)")

    # -- backend -> agent ------------------------------------------------------------------------------

    async def _back_response(self, message: Message) -> None:
        backend_id = message.get("id")
        pending = self._take(backend_id)
        if pending is None:
            if type(backend_id) is int and backend_id in self._abandoned:
                self._abandoned.discard(backend_id)
                return  # already answered (timeout, cancellation, drain): a late answer goes nowhere
            logger.warning(
                "mcpsqueeze: dropped an answer from the backend for id %s, which this proxy never sent",
                _short(backend_id),
            )
            return
        if pending.waiter is not None:  # the proxy's own request
            pending.waiter.answer = message
            pending.waiter.done.set()
            return
        message = with_id(message, pending.request["id"])  # an unchanged result keeps its bytes
        with self._working():
            result = message.get("result")
            if not isinstance(result, dict):
                await self._to_front(message)
            elif pending.call is not None:
                assert self._tg is not None
                self._busy += 1  # released by _present
                if self._inline and text_chars(result) < _INLINE_PRESENT:
                    # Its stages run on the event loop anyway (nothing to wait for): no task to spawn
                    await self._present(pending.call, message, result)
                else:
                    self._tg.start_soon(self._present, pending.call, message, result)
            elif pending.method == "tools/list":
                await self._to_front(self._shaped(self._with_recover_tool(message, result)))
            else:
                if pending.method == "initialize" and isinstance(result.get("protocolVersion"), str):
                    self._protocol = result["protocolVersion"]
                await self._to_front(message)

    def _shaped(self, listing: Message) -> Message:
        """A tools/list answer as this session's client should see it (``shaped_listing``)."""
        return shaped_listing(listing, self.services, self.pipeline, self.client, self._ours())

    def _ours(self) -> tuple[str | None, ...]:
        """The tools the proxy answers itself: the recover tool and, compressed, `<server>_invoke_tool`."""
        if self.compressed is None:
            return (self.recover_tool,)
        return (
            self.recover_tool,
            CompressedTools.of(self.compressed.prefix, self.compressed.level, ()).invoke_tool,
        )

    def _with_recover_tool(self, message: Message, result: dict[str, Any]) -> Message:
        self.recover_tool, listed = with_recover_tool(message, result, self.recover_tool, [self.pipeline])
        return listed

    async def _present(self, call: Call, message: Message, result: dict[str, Any]) -> None:
        try:
            try:
                presented, _ = await self.pipeline.present(call, result)
            except Exception as exc:  # never lose the answer: the original goes out unchanged
                logger.warning("mcpsqueeze: presenting %s failed (%r); result passed through", call.tool, exc)
                presented = result
            await self._to_front(message if presented is result else {**message, "result": presented})
        finally:
            self._busy -= 1
            self._notify()

    async def _answer_recover(self, request_id: Any, arguments: Any, modern: bool = False) -> None:
        try:
            result = await answer_recover(self.services, arguments, modern=modern, client=self.client)
            await self._to_front({"jsonrpc": "2.0", "id": request_id, "result": result})
        finally:
            self._busy -= 1  # taken by _front_request
            self._notify()

    # -- --compress-tools --------------------------------------------------------------------------------

    def _compressed_request(self, message: Message, params: dict[str, Any]) -> bool:
        """tools/list and calls of the frontend tools: answered (or made the real call) here; True when
        taken. A call with the tools already listed is served inline (no task: invoke adds ~nothing),
        unless its input is large."""
        assert self.compressed is not None
        method = message["method"]
        if method == "tools/list":
            self._spawn(self._compressed_list, message)
            return True
        if method != "tools/call" or not self.compressed.owns(params.get("name")):
            return False
        tools = (
            None if large_invoke(params.get("arguments")) else self.compressed.tools
        )  # large: off the loop
        answer = CompressedFront.answer(tools, message, (self.recover_tool,)) if tools is not None else None
        if answer is None or (isinstance(answer, dict) and _code(answer) == NOT_FOUND):  # list (again) first
            self._spawn(self._compressed_call, message)
        elif isinstance(answer, Invoke):
            self._spawn(self._front_request, invoke_message(message, answer))
        else:
            self._spawn(functools.partial(self._answer_frontend, message), answer)
        return True

    async def _answer_frontend(self, request: Message, answer: Message) -> None:
        """A compressed listing's own answer (a schema, the tool list) to ``request``: to a client with a
        profile, one its client cannot keep whole is presented as a tool result is (stored, shrunk,
        recoverable)."""
        result, client = answer.get("result"), self.client
        if client is not None and isinstance(result, dict) and not _kept_whole(client, result):
            self._calls += 1
            params = request.get("params")
            tool = str(params.get("name")) if isinstance(params, dict) else "tools/call"
            call = Call(self.services.server_name, tool, {}, self._calls, client=client)
            presented, _ = await self.pipeline.present(call, result)
            answer = {**answer, "result": presented}
        await self._to_front(_modern(request, answer))

    def _spawn(self, func: Callable[[Message], Any], message: Message) -> None:
        """Run `func(message)` as a task the drain waits for."""
        assert self._tg is not None
        self._busy += 1

        async def run() -> None:
            try:
                await func(message)
            finally:
                self._busy -= 1
                self._notify()

        self._tg.start_soon(run)

    def _asking_as(self, message: Message) -> Callable[[str, dict[str, Any]], Any]:
        """The proxy's own requests on behalf of `message`: with its `_meta` (a 2026-07-28 client's
        envelope, which such a backend requires on every request; stripped for an older one)."""
        params = message.get("params")
        meta = params.get("_meta") if isinstance(params, dict) else None
        envelope = {k: v for k, v in meta.items() if k != "progressToken"} if isinstance(meta, dict) else {}

        async def ask(method: str, params: dict[str, Any]) -> Message:
            return await self._ask(method, {**params, "_meta": envelope} if envelope else params)

        return ask

    async def _compressed_list(self, message: Message) -> None:
        assert self.compressed is not None
        tools = await self.compressed.fetch(self._asking_as(message))
        if not isinstance(tools, CompressedTools):
            await self._to_front({**tools, "id": message["id"]})  # the backend's own error
            return
        self.recover_tool, result = self.compressed.listing(tools, self.recover_tool, [self.pipeline])
        listed = self._shaped({"jsonrpc": "2.0", "id": message["id"], "result": result})
        await self._to_front(_modern(message, listed))

    async def _compressed_call(self, message: Message) -> None:
        assert self.compressed is not None
        answer = await self.compressed.resolve(self._asking_as(message), message, (self.recover_tool,))
        if isinstance(answer, Invoke):
            await self._front_request(invoke_message(message, answer))
        else:
            await self._answer_frontend(message, answer)

    async def _ask(self, method: str, params: dict[str, Any]) -> Message:
        """A request of the proxy's own to the backend (ids, timeout, a gone backend: as the agent's)."""
        if self.back is None or self.dead_reason is not None:
            return self._gone_error(None, method)
        backend_id = next(self._ids)
        waiter = _Waiter()
        pending = _Pending(method, {"jsonrpc": "2.0", "id": None, "method": method}, waiter=waiter)
        self._pending[backend_id] = pending
        self._watch_soon(backend_id, pending)
        why = await self._to_back(
            self._for_backend({"jsonrpc": "2.0", "id": backend_id, "method": method, "params": params})
        )
        if why is not None and self._take(backend_id) is not None:
            return error_response(None, INVALID_REQUEST, f"mcpsqueeze: cannot send {method}: {why}")
        await waiter.done.wait()
        assert waiter.answer is not None
        return waiter.answer

    async def _reply(self, pending: _Pending, message: Message) -> None:
        """An answer the proxy makes for a pending request: to its waiter when it is the proxy's own."""
        if pending.waiter is not None:
            pending.waiter.answer = message
            pending.waiter.done.set()
            return
        await self._to_front(message)

    # -- sending ---------------------------------------------------------------------------------------

    async def _to_front(self, message: Message) -> None:
        related = None
        if message.get("method") == "notifications/progress":
            params = message.get("params")
            if isinstance(params, dict) and valid_id(params.get("progressToken")):
                related = self._progress.get(_key(params["progressToken"]))
        with contextlib.suppress(ChannelClosed):  # the agent is gone; _pump_front ends the relay
            try:
                await self.front.send(message, related)
            except (ValueError, TypeError, RecursionError, MCPSqueezeError) as exc:
                # Parsed but not writable (e.g. what the HTTP transport's models refuse): never a crash,
                # and a response still answers its request.
                if "method" in message or not valid_id(message.get("id")):
                    logger.warning("mcpsqueeze: dropped a message the agent's side cannot carry: %s", exc)
                    return
                await self.front.send(unreadable_answer(message["id"], "the request", str(exc)), related)

    async def _to_back(self, message: Message) -> str | None:
        """Send to the backend; returns why the message could not be encoded, None when sent (or gone)."""
        if self.back is None or self.dead_reason is not None:
            return None
        with contextlib.suppress(ChannelClosed):  # _pump_back notices the closed backend and reports it
            try:
                await self.back.send(message)
            except (ValueError, TypeError, RecursionError, MCPSqueezeError) as exc:
                logger.warning("mcpsqueeze: could not send a message to the backend: %s", exc)
                return str(exc)
        return None


def _kept_whole(client: ClientProfile, result: dict[str, Any]) -> bool:
    """Whether ``client`` keeps ``result``'s text whole (with our margin)."""
    return client.answer_limits().fits(text_of(result))


def _timed_out(pending: _Pending, why: str) -> Message:
    """The error a request the proxy gave up waiting for is answered with (a timeout, or the agent gone)."""
    return error_response(pending.request["id"], TIMEOUT, f"mcpsqueeze: {why}")


def _code(answer: Message) -> Any:
    error = answer.get("error")
    return error.get("code") if isinstance(error, dict) else None


def _modern(request: Message, answer: Message) -> Message:
    """A result the proxy made: a 2026-07-28 client (its envelope in `_meta`) requires its type, and on a
    listing its cache fields (nothing cached: the backend may change its tools)."""
    params = request.get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None
    result = answer.get("result")
    modern = isinstance(meta, dict) and "io.modelcontextprotocol/protocolVersion" in meta
    if not modern or not isinstance(result, dict):
        return answer
    extra = {"ttlMs": 0, "cacheScope": "private"} if request.get("method") == "tools/list" else {}
    return {**answer, "result": {**result, "resultType": "complete", **extra}}


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."
