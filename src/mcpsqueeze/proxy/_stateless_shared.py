"""The stateless path's backend for a handshake-era server (a stdio command, or a URL that only speaks
2025-11-25): one shared connection, initialised by the proxy, carries every stateless request with
proxy-owned ids and progress tokens; the 2026-07-28 envelope is stripped towards it, `server/discover` is
answered from its `initialize` result, and results gain the fields 2026-07-28 requires (`resultType`,
`ttlMs`/`cacheScope` on listings). A server-to-client request becomes an `InputRequiredResult` (MRTR),
and `subscriptions/listen` is served from the backend's list_changed and updated notifications.
"""

from __future__ import annotations

import contextlib
import itertools
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import anyio
import anyio.abc
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from .._errors import BackendError
from ..settings import Settings
from ..transports import (
    BACKEND_GONE,
    TIMEOUT,
    Channel,
    ChannelClosed,
    Connection,
    Message,
    error_response,
    list_tool_names,
)
from ._modern_http import (
    CACHEABLE,
    ENVELOPE_PREFIX,
    HANDSHAKE_VERSION,
    MODERN_VERSION,
    PING_INTERVAL,
    SERVER_INFO_META,
    SSE_HEADERS,
    Exchange,
    Send,
    StatelessFront,
    log,
    params_of,
    respond_json,
    sse_event,
    watch_disconnect,
)

__all__ = ["SharedBackend"]


INTERACTIVE = frozenset({"tools/call", "prompts/get", "resources/read"})
INPUT_METHODS = frozenset({"elicitation/create", "sampling/createMessage", "roots/list"})
INPUT_KEY = "mcpsqueeze-input"
STATE_PREFIX = "mcpsqueeze-state-"
PARK_SECONDS = 300.0  # how long a call waiting for the client's input (MRTR) is kept for its retry


SUBSCRIPTION_ID_META = "io.modelcontextprotocol/subscriptionId"
LISTEN_KINDS = {
    "notifications/tools/list_changed": "toolsListChanged",
    "notifications/prompts/list_changed": "promptsListChanged",
    "notifications/resources/list_changed": "resourcesListChanged",
    "notifications/resources/updated": "resourceSubscriptions",
}


@dataclass
class _Listener:
    """One open `subscriptions/listen` stream and what it was granted."""

    honored: dict[str, Any]
    uris: frozenset[str]
    events: MemoryObjectSendStream[Message]
    meta: dict[str, Any]

    def wants(self, kind: str, uri: Any) -> bool:
        if kind == "resourceSubscriptions":
            return uri in self.uris
        return self.honored.get(kind) is True

    def stamp(self, message: Message) -> Message:
        params = params_of(message)
        meta = params.get("_meta")
        merged = {**meta, **self.meta} if isinstance(meta, dict) else dict(self.meta)
        return {**message, "params": {**params, "_meta": merged}}


@dataclass
class _Flight:
    """One backend request of a stateless client; it may outlive the HTTP request (MRTR rounds)."""

    method: str
    notify: Send
    outcome: MemoryObjectSendStream[Message]
    results: MemoryObjectReceiveStream[Message]
    scope: anyio.CancelScope = field(default_factory=anyio.CancelScope)
    asking: Message | None = None  # the backend's server-to-client request awaiting the client's answer
    parked: bool = False


class SharedBackend:
    """One initialised connection to a 2025-11-25 (or older) backend, carrying every stateless request.

    A server-to-client request (elicitation, sampling, roots) that arrives while exactly one interactive
    request is in flight is turned into an `InputRequiredResult` for that request's client; the backend
    call stays open, and the client's retry (with `inputResponses` and our `requestState`) answers it.
    """

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.channel: Channel | None = None
        self.dead: str | None = None
        self.initialize: dict[str, Any] = {}
        self._ids = itertools.count(1)
        self.connection: Connection | None = None  # the backend port over the channel: every request answered
        self._progress: dict[str, tuple[Any, _Flight]] = {}  # proxy token -> (client token, flight)
        self._flights: list[_Flight] = []
        self._parked: dict[str, _Flight] = {}
        self._tg: anyio.abc.TaskGroup | None = None
        self._listeners: list[_Listener] = []
        self._subscribed: dict[str, int] = {}  # resource uri -> listeners wanting its updates

    async def run(self, *, task_status: Any = anyio.TASK_STATUS_IGNORED) -> None:
        from ..transports import open_backend

        started = False
        try:
            async with open_backend(self.settings) as channel, anyio.create_task_group() as tg:
                self.channel = channel
                self.connection = Connection(
                    channel, on_request=self._answer_backend_request, on_notification=self._notification
                )
                self._tg = tg
                tg.start_soon(self._read, tg.cancel_scope)
                answer = await self._exchange(
                    {
                        "jsonrpc": "2.0",
                        "method": "initialize",
                        "params": {
                            "protocolVersion": HANDSHAKE_VERSION,
                            "capabilities": {"elicitation": {}, "sampling": {}, "roots": {}},
                            "clientInfo": {"name": "mcpsqueeze", "version": _version()},
                        },
                    }
                )
                result = answer.get("result")
                if not isinstance(result, dict):
                    raise BackendError(f"the backend refused initialize: {answer.get('error')}")
                self.initialize = result
                await channel.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
                started = True
                task_status.started()
                await anyio.sleep_forever()
        except Exception as exc:  # whatever ends the connection is reported to its callers
            leaf = _leaf(exc)
            self.dead = (
                str(leaf) if isinstance(leaf, BackendError) else f"the backend connection failed: {leaf}"
            )
        finally:
            self.dead = self.dead or "the backend closed the connection"
            self._fail_pending()
            if not started:
                task_status.started()

    def _fail_pending(self) -> None:
        if self.connection is not None:
            self.connection.end(self.dead or "the backend closed the connection")

    async def _read(self, scope: anyio.CancelScope) -> None:
        """The connection's reader; when the backend goes, every stateless request waiting is answered."""
        assert self.connection is not None
        await self.connection.run()
        self.dead = self.dead or "the backend closed the connection"
        log.warning("stateless backend connection ended: %s", self.dead)
        scope.cancel()

    async def _answer_backend_request(self, message: Message) -> None:
        assert self.channel is not None
        if message["method"] == "ping":
            reply: Message = {"jsonrpc": "2.0", "id": message["id"], "result": {}}
        else:
            if message["method"] in INPUT_METHODS:
                waiting = [f for f in self._flights if f.method in INTERACTIVE and f.asking is None]
                if len(waiting) == 1:  # then it can only be that request's (MRTR through the proxy)
                    waiting[0].asking = message
                    with contextlib.suppress(anyio.WouldBlock, anyio.BrokenResourceError):
                        waiting[0].outcome.send_nowait({"input": message})
                        return
            # With several stateless requests in flight on one connection, a server-to-client request
            # cannot be tied to the client that caused it; answered, not left hanging.
            reply = error_response(
                message["id"],
                -32601,
                f"mcpsqueeze: {message['method']} cannot reach a 2026-07-28 client here (several stateless "
                "requests share one backend connection)",
            )
        with contextlib.suppress(ChannelClosed):
            await self.channel.send(reply)

    async def _notification(self, message: Message) -> None:
        params = message.get("params")
        kind = LISTEN_KINDS.get(message["method"])
        if kind is not None:
            uri = params.get("uri") if isinstance(params, dict) else None
            for listener in list(self._listeners):
                if listener.wants(kind, uri):
                    with contextlib.suppress(anyio.WouldBlock, anyio.BrokenResourceError):
                        listener.events.send_nowait(listener.stamp(message))
            return
        if message["method"] == "notifications/progress" and isinstance(params, dict):
            route = self._progress.get(str(params.get("progressToken")))
            if route is not None:
                token, flight = route
                await flight.notify({**message, "params": {**params, "progressToken": token}})
            return
        log.debug("dropped backend notification %s (no stateless stream to carry it)", message["method"])

    async def _exchange(self, message: Message) -> Message:
        """Send a request with a proxy-owned id; its answer, or an error response (gone, unreadable)."""
        if self.connection is None:
            return error_response(None, BACKEND_GONE, f"mcpsqueeze: {self.dead or 'not connected'}")
        return await self.connection.exchange(message, "the client closed its stream")

    async def request(self, method: str, params: dict[str, Any] | None = None) -> Message:
        """One request of the proxy's own on the shared connection (the backend port)."""
        message: Message = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        return await self._exchange(message)

    async def tool_names(self) -> list[str]:
        async def ask(method: str, params: dict[str, Any]) -> Any:
            return (await self.request(method, params)).get("result")

        return await list_tool_names(ask)

    def discover(self, request_id: Any) -> Message:
        init = self.initialize
        result: dict[str, Any] = {
            "supportedVersions": [MODERN_VERSION],
            "capabilities": init.get("capabilities") or {},
            "resultType": "complete",
            "ttlMs": 0,
            "cacheScope": "private",
        }
        if init.get("instructions") is not None:
            result["instructions"] = init["instructions"]
        if isinstance(init.get("serverInfo"), dict):
            result["_meta"] = {SERVER_INFO_META: init["serverInfo"]}
        return {"jsonrpc": "2.0", "id": request_id, "result": result}

    def _start(self, message: Message, notify: Send) -> _Flight:
        """Send one stateless request over the shared connection; its outcomes arrive on the flight."""
        method: str = message["method"]
        params = dict(message["params"]) if isinstance(message.get("params"), dict) else {}
        params.pop("inputResponses", None)  # MRTR fields are between the client and us
        params.pop("requestState", None)
        send_stream, receive_stream = anyio.create_memory_object_stream[Message](8)
        flight = _Flight(method, notify, send_stream, receive_stream)
        meta = params.get("_meta")
        token_key: str | None = None
        if isinstance(meta, dict):
            meta = {k: v for k, v in meta.items() if not k.startswith(ENVELOPE_PREFIX)}
            if "progressToken" in meta:  # tokens of different clients may collide: proxy-owned ones
                token_key = f"mcpsqueeze-progress-{next(self._ids)}"
                self._progress[token_key] = (meta["progressToken"], flight)
                meta["progressToken"] = token_key
            if meta:
                params["_meta"] = meta
            else:
                params.pop("_meta", None)
        outgoing: Message = {"jsonrpc": "2.0", "method": method}
        if params or "params" in message:
            outgoing["params"] = params
        self._flights.append(flight)
        assert self._tg is not None
        self._tg.start_soon(self._fly, flight, outgoing, token_key)
        return flight

    async def _fly(self, flight: _Flight, outgoing: Message, token_key: str | None) -> None:
        try:
            with flight.scope:
                answer = await self._exchange(outgoing)
                result = answer.get("result")
                if isinstance(result, dict):
                    extra: dict[str, Any] = {}
                    if "resultType" not in result:
                        extra["resultType"] = "complete"
                    if flight.method in CACHEABLE:
                        extra["ttlMs"] = result.get("ttlMs", 0)
                        extra["cacheScope"] = result.get("cacheScope", "private")
                    if extra:
                        answer = {**answer, "result": {**result, **extra}}
                with contextlib.suppress(anyio.BrokenResourceError, anyio.ClosedResourceError):
                    await flight.outcome.send({"final": answer})
        finally:
            if flight in self._flights:
                self._flights.remove(flight)
            if token_key is not None:
                self._progress.pop(token_key, None)
            flight.outcome.close()

    async def _expire(self, token: str) -> None:
        await anyio.sleep(PARK_SECONDS)
        flight = self._parked.pop(token, None)
        if flight is not None:
            flight.scope.cancel()  # the client never retried: the backend call is cancelled

    async def _resume(self, token: str, params: dict[str, Any], notify: Send) -> _Flight | Message:
        """The retry of a request that got our InputRequiredResult: answer the backend, keep waiting."""
        flight = self._parked.pop(token, None)
        if flight is None or flight.asking is None:
            return {
                "code": -32602,
                "message": "mcpsqueeze: unknown or expired requestState (it was used already, timed out, "
                "or the proxy restarted); send the request again without it",
            }
        responses = params.get("inputResponses")
        answer = responses.get(INPUT_KEY) if isinstance(responses, dict) else None
        flight.notify = notify
        flight.parked = False
        if answer is None:  # not answered: ask again
            with contextlib.suppress(anyio.WouldBlock, anyio.BrokenResourceError):
                flight.outcome.send_nowait({"input": flight.asking})
            return flight
        assert self.channel is not None
        asking, flight.asking = flight.asking, None
        with contextlib.suppress(ChannelClosed):
            await self.channel.send({"jsonrpc": "2.0", "id": asking["id"], "result": answer})
        return flight

    def _input_required(self, request_id: Any, flight: _Flight, asking: Message) -> Message:
        import secrets

        token = STATE_PREFIX + secrets.token_urlsafe(24)
        flight.parked = True
        self._parked[token] = flight
        assert self._tg is not None
        self._tg.start_soon(self._expire, token)
        entry: dict[str, Any] = {"method": asking["method"]}
        if "params" in asking:
            entry["params"] = asking["params"]
        result = {"resultType": "input_required", "inputRequests": {INPUT_KEY: entry}, "requestState": token}
        return {"jsonrpc": "2.0", "id": request_id, "result": result}

    async def listen(self, message: Message, send: Any, receive: Any) -> None:
        """`subscriptions/listen` from the backend's handshake-era notifications (list_changed, updated)."""
        params = params_of(message)
        wanted = params.get("notifications") if isinstance(params.get("notifications"), dict) else {}
        assert isinstance(wanted, dict)
        caps = self.initialize.get("capabilities") or {}
        honored: dict[str, Any] = {}
        for key, capability in (
            ("toolsListChanged", "tools"),
            ("promptsListChanged", "prompts"),
            ("resourcesListChanged", "resources"),
        ):
            if wanted.get(key) is True and (caps.get(capability) or {}).get("listChanged"):
                honored[key] = True
        uris = [u for u in wanted.get("resourceSubscriptions") or [] if isinstance(u, str)]
        if uris and (caps.get("resources") or {}).get("subscribe"):
            honored["resourceSubscriptions"] = uris
        else:
            uris = []
        meta = {SUBSCRIPTION_ID_META: message["id"]}
        events, events_out = anyio.create_memory_object_stream[Message](64)
        listener = _Listener(honored, frozenset(uris), events, meta)
        self._listeners.append(listener)
        for uri in uris:
            self._subscribed[uri] = self._subscribed.get(uri, 0) + 1
            if self._subscribed[uri] == 1:
                await self._exchange(
                    {"jsonrpc": "2.0", "method": "resources/subscribe", "params": {"uri": uri}}
                )
        ack = {
            "jsonrpc": "2.0",
            "method": "notifications/subscriptions/acknowledged",
            "params": {"notifications": honored, "_meta": meta},
        }
        try:
            with anyio.CancelScope() as cancel:
                async with anyio.create_task_group() as tg, events_out:
                    tg.start_soon(watch_disconnect, receive, cancel)
                    await send({"type": "http.response.start", "status": 200, "headers": SSE_HEADERS})
                    await send({"type": "http.response.body", "body": sse_event(ack), "more_body": True})
                    while self.dead is None:
                        note: Message | None = None
                        with anyio.move_on_after(PING_INTERVAL):
                            note = await events_out.receive()
                        chunk = b": ping\r\n\r\n" if note is None else sse_event(note)
                        await send({"type": "http.response.body", "body": chunk, "more_body": True})
                    done = {
                        "jsonrpc": "2.0",
                        "id": message["id"],
                        "result": {"_meta": meta, "resultType": "complete"},
                    }
                    await send({"type": "http.response.body", "body": sse_event(done), "more_body": False})
                    tg.cancel_scope.cancel()
        finally:
            self._listeners.remove(listener)
            events.close()
            with anyio.CancelScope(shield=True):
                for uri in uris:
                    self._subscribed[uri] -= 1
                    if self._subscribed[uri] == 0 and self.dead is None:
                        del self._subscribed[uri]
                        with anyio.move_on_after(5):
                            await self._exchange(
                                {"jsonrpc": "2.0", "method": "resources/unsubscribe", "params": {"uri": uri}}
                            )

    async def call(self, message: Message, notify: Send) -> Message:
        """One stateless request (or MRTR retry), answered with the client's own id."""
        params = params_of(message)
        token = params.get("requestState")
        if isinstance(token, str) and token.startswith(STATE_PREFIX):
            resumed = await self._resume(token, params, notify)
            if not isinstance(resumed, _Flight):
                return {"jsonrpc": "2.0", "id": message["id"], "error": resumed}
            flight = resumed
        else:
            flight = self._start(message, notify)
        try:
            item = await flight.results.receive()
        except anyio.EndOfStream:
            return error_response(message["id"], BACKEND_GONE, f"mcpsqueeze: {self.dead or 'the call ended'}")
        except anyio.get_cancelled_exc_class():
            if not flight.parked:
                flight.scope.cancel()  # the client closed its stream: cancel the backend's work
            raise
        if "input" in item:
            return self._input_required(message["id"], flight, item["input"])
        return {**item["final"], "id": message["id"]}

    async def relay(self, front: StatelessFront, exchange: Exchange) -> None:
        message, method, params = exchange.message, exchange.method, exchange.params
        receive, send = exchange.receive, exchange.send
        if method == "server/discover":
            await respond_json(send, self.discover(message["id"]))
            return
        if method == "subscriptions/listen":
            await self.listen(message, send, receive)
            return
        accepts_sse = "text/event-stream" in exchange.request.headers.get("accept", "")
        events, events_out = anyio.create_memory_object_stream[Message](16)

        async def notify(note: Message) -> None:
            if accepts_sse:
                with contextlib.suppress(anyio.BrokenResourceError, anyio.ClosedResourceError):
                    await events.send(note)

        async def work() -> None:
            async with events:
                if front.services.timeout:
                    answer: Message | None = None
                    with anyio.move_on_after(front.services.timeout):
                        answer = await self.call(message, notify)
                    if answer is None:
                        answer = error_response(
                            message["id"],
                            TIMEOUT,
                            f"mcpsqueeze: the backend did not answer {method} within "
                            f"{front.services.timeout:g} s; the request was cancelled.",
                        )
                else:
                    answer = await self.call(message, notify)
                await events.send({"final": await front.finish(method, params, answer)})

        with anyio.CancelScope() as cancel:
            async with anyio.create_task_group() as tg, events_out:
                tg.start_soon(watch_disconnect, receive, cancel)
                tg.start_soon(work)
                first: Message | None = None
                with anyio.move_on_after(PING_INTERVAL):
                    first = await _receive(events_out)
                if first is not None and "final" in first:
                    await respond_json(send, first["final"])
                else:
                    await send({"type": "http.response.start", "status": 200, "headers": SSE_HEADERS})
                    item = first
                    while True:
                        if item is None:
                            await send(
                                {"type": "http.response.body", "body": b": ping\r\n\r\n", "more_body": True}
                            )
                        elif "final" in item:
                            await send(
                                {
                                    "type": "http.response.body",
                                    "body": sse_event(item["final"]),
                                    "more_body": False,
                                }
                            )
                            break
                        else:
                            await send(
                                {"type": "http.response.body", "body": sse_event(item), "more_body": True}
                            )
                        item = None
                        with anyio.move_on_after(PING_INTERVAL):
                            item = await _receive(events_out)
                tg.cancel_scope.cancel()


async def _receive(stream: MemoryObjectReceiveStream[Message]) -> Message:
    try:
        return await stream.receive()
    except anyio.EndOfStream:
        return {"final": error_response(None, BACKEND_GONE, "mcpsqueeze: the backend closed the connection")}


def _leaf(exc: BaseException) -> BaseException:
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


def _version() -> str:
    from .._version import __version__

    return __version__


if TYPE_CHECKING:  # mypy checks that this backend satisfies the backend port
    from ..transports import Backend

    def _is_a_backend(backend: SharedBackend) -> Backend:
        return backend
