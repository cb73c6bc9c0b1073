"""The stateless path's backend: a POST per request to a server that speaks 2026-07-28 (`ModernHttpBackend`),
else, for a handshake-era server, one shared connection, initialised by the proxy, that carries every
stateless request through one `Correlator`; the envelope is stripped towards it, `server/discover` answered
from its `initialize`, a server-to-client request made an `InputRequiredResult` (MRTR), and
`subscriptions/listen` served from its notifications.
"""

from __future__ import annotations

import contextlib
import logging
import secrets
from dataclasses import dataclass, field
from typing import Any

import anyio
import anyio.abc
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from .._envelope import (
    MODERN_VERSION,
    SERVER_INFO,
    SUBSCRIPTION_ID,
    meta_of,
    without_envelope,
)
from .._errors import BackendError, first_leaf
from ..settings import Settings
from ._channels import open_backend
from ._correlator import Correlator
from ._jsonrpc import BACKEND_GONE, Message, error_response, params_of
from ._modern_http import PING_INTERVAL, ModernHttpBackend, Notify

__all__ = ["SharedBackend", "StatelessBackend", "open_stateless_backend"]

log = logging.getLogger(__name__)

INTERACTIVE = frozenset({"tools/call", "prompts/get", "resources/read"})
INPUT_METHODS = frozenset({"elicitation/create", "sampling/createMessage", "roots/list"})
INPUT_KEY = "mcpsqueeze-input"
STATE_PREFIX = "mcpsqueeze-state-"
PARK_SECONDS = 300.0  # how long a call waiting for the client's input (MRTR) is kept for its retry
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
        return uri in self.uris if kind == "resourceSubscriptions" else self.honored.get(kind) is True


@dataclass
class _Flight:
    """One backend request of a stateless client; it may outlive the HTTP request (MRTR rounds)."""

    method: str
    notify: Notify
    outcome: MemoryObjectSendStream[Message]
    results: MemoryObjectReceiveStream[Message]
    scope: anyio.CancelScope = field(default_factory=anyio.CancelScope)
    asking: Message | None = None  # the backend's server-to-client request awaiting the client's answer
    parked: bool = False


class SharedBackend:
    """One initialised connection to a 2025-11-25 (or older) backend, carrying every stateless request. A
    server-to-client request while exactly one interactive request is in flight becomes that request's
    `InputRequiredResult`; the backend call stays open until the client's retry answers it."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.dead: str | None = None
        self.initialize: dict[str, Any] = {}
        self.peer: Correlator | None = None
        self._flights: list[_Flight] = []
        self._parked: dict[str, _Flight] = {}
        self._tg: anyio.abc.TaskGroup | None = None
        self._listeners: list[_Listener] = []
        self._subscribed: dict[str, int] = {}  # resource uri -> listeners wanting its updates

    async def run(self, *, task_status: Any = anyio.TASK_STATUS_IGNORED) -> None:
        started = False
        try:
            async with open_backend(self.settings) as channel, anyio.create_task_group() as tg:
                self._tg = tg
                peer = self.peer = Correlator(
                    channel, on_request=self._ask_client, on_notification=self._tell
                )
                tg.start_soon(self._read, peer, tg.cancel_scope)
                self.initialize = await peer.initialize({"elicitation": {}, "sampling": {}, "roots": {}})
                started = True
                task_status.started()
                await anyio.sleep_forever()
        except Exception as exc:  # whatever ends the connection is reported to its callers
            leaf = first_leaf(exc)
            failed = str(leaf) if isinstance(leaf, BackendError) else f"the backend connection failed: {leaf}"
            self.dead = failed
        finally:
            self.dead = self.dead or "the backend closed the connection"
            if self.peer is not None:
                self.peer.end(self.dead)
            if not started:
                task_status.started()

    async def _read(self, peer: Correlator, scope: anyio.CancelScope) -> None:
        """The connection's reader; when the backend goes, every stateless request waiting is answered."""
        await peer.run()
        self.dead = self.dead or peer.dead
        log.warning("stateless backend connection ended: %s", self.dead)
        scope.cancel()

    async def ask(self, method: str, params: dict[str, Any]) -> Message:
        """One request of the proxy's own on the shared connection."""
        if self.peer is None:
            return error_response(None, BACKEND_GONE, f"mcpsqueeze: {self.dead or 'not connected'}")
        return await self.peer.ask(method, without_envelope(params))

    async def _ask_client(self, message: Message) -> None:
        """The backend asks the client: MRTR when it can only be one waiting call's; else refused."""
        assert self.peer is not None
        if message["method"] == "ping":
            await self.peer.send({"jsonrpc": "2.0", "id": message["id"], "result": {}})
            return
        if message["method"] in INPUT_METHODS:
            waiting = [f for f in self._flights if f.method in INTERACTIVE and f.asking is None]
            if len(waiting) == 1:  # then it can only be that request's (MRTR through the proxy)
                waiting[0].asking = message
                with contextlib.suppress(anyio.WouldBlock, anyio.BrokenResourceError):
                    waiting[0].outcome.send_nowait({"input": message})
                    return
        # With several stateless requests in flight on one connection, a server-to-client request
        # cannot be tied to the client that caused it; answered, not left hanging.
        why = f"mcpsqueeze: {message['method']} cannot reach a 2026-07-28 client here (several stateless "
        await self.peer.send(error_response(message["id"], -32601, why + "requests share one connection)"))

    async def _tell(self, message: Message) -> None:
        """A backend notification: to the listeners that asked for its kind."""
        kind = LISTEN_KINDS.get(message["method"])
        if kind is None:
            log.debug("dropped backend notification %s (no stateless stream carries it)", message["method"])
            return
        params = params_of(message)
        for listener in list(self._listeners):
            if listener.wants(kind, params.get("uri")):
                note = {**message, "params": {**params, "_meta": {**meta_of(params), **listener.meta}}}
                with contextlib.suppress(anyio.WouldBlock, anyio.BrokenResourceError):
                    listener.events.send_nowait(note)

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
            result["_meta"] = {SERVER_INFO: init["serverInfo"]}
        return {"jsonrpc": "2.0", "id": request_id, "result": result}

    # -- one stateless request -------------------------------------------------------------------------

    async def call(self, message: Message, notify: Notify, headers: object = None) -> Message | None:
        """One stateless request (or MRTR retry), answered with the client's own id (the routing `headers`
        of a 2026-07-28 request have nothing to route on one shared connection)."""
        method, params = message["method"], params_of(message)
        if method == "server/discover":
            return self.discover(message["id"])
        if method == "subscriptions/listen":
            return await self._listen(message, notify)
        token = params.get("requestState")
        if isinstance(token, str) and token.startswith(STATE_PREFIX):
            resumed = await self._resume(token, params, notify)
            if isinstance(resumed, dict):
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

    def _start(self, message: Message, notify: Notify) -> _Flight:
        """Send one stateless request over the shared connection; its outcomes arrive on the flight."""
        params = {k: v for k, v in params_of(message).items() if k not in ("inputResponses", "requestState")}
        outgoing: Message = {"jsonrpc": "2.0", "method": message["method"]}
        if params or "params" in message:
            outgoing["params"] = without_envelope(params)
        send_stream, receive_stream = anyio.create_memory_object_stream[Message](8)
        flight = _Flight(message["method"], notify, send_stream, receive_stream)
        self._flights.append(flight)
        assert self._tg is not None
        self._tg.start_soon(self._fly, flight, outgoing)
        return flight

    async def _fly(self, flight: _Flight, outgoing: Message) -> None:
        async def progress(note: Message) -> None:
            await flight.notify(note)

        try:
            with flight.scope:
                assert self.peer is not None
                answer = await self.peer.request(outgoing, progress=progress)
                with contextlib.suppress(anyio.BrokenResourceError, anyio.ClosedResourceError):
                    await flight.outcome.send({"final": answer})
        finally:
            self._flights.remove(flight)
            flight.outcome.close()

    async def _expire(self, token: str) -> None:
        await anyio.sleep(PARK_SECONDS)
        flight = self._parked.pop(token, None)
        if flight is not None:
            flight.scope.cancel()  # the client never retried: the backend call is cancelled

    async def _resume(self, token: str, params: dict[str, Any], notify: Notify) -> _Flight | Message:
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
        flight.notify, flight.parked = notify, False
        if answer is None:  # not answered: ask again
            with contextlib.suppress(anyio.WouldBlock, anyio.BrokenResourceError):
                flight.outcome.send_nowait({"input": flight.asking})
            return flight
        asking, flight.asking = flight.asking, None
        assert self.peer is not None
        await self.peer.send({"jsonrpc": "2.0", "id": asking["id"], "result": answer})
        return flight

    def _input_required(self, request_id: Any, flight: _Flight, asking: Message) -> Message:
        token = STATE_PREFIX + secrets.token_urlsafe(24)
        flight.parked = True
        self._parked[token] = flight
        assert self._tg is not None
        self._tg.start_soon(self._expire, token)
        entry = {key: asking[key] for key in ("method", "params") if key in asking}
        result = {"resultType": "input_required", "inputRequests": {INPUT_KEY: entry}, "requestState": token}
        return {"jsonrpc": "2.0", "id": request_id, "result": result}

    async def _listen(self, message: Message, notify: Notify) -> Message:
        """`subscriptions/listen` from the backend's handshake-era notifications (list_changed, updated):
        the acknowledgement, then what the client asked for, until the backend goes."""
        wanted = params_of(message).get("notifications")
        wanted = wanted if isinstance(wanted, dict) else {}
        caps = self.initialize.get("capabilities") or {}
        honored: dict[str, Any] = {
            key: True
            for key, capability in (
                ("toolsListChanged", "tools"),
                ("promptsListChanged", "prompts"),
                ("resourcesListChanged", "resources"),
            )
            if wanted.get(key) is True and (caps.get(capability) or {}).get("listChanged")
        }
        uris = [u for u in wanted.get("resourceSubscriptions") or [] if isinstance(u, str)]
        if uris and (caps.get("resources") or {}).get("subscribe"):
            honored["resourceSubscriptions"] = uris
        else:
            uris = []
        meta = {SUBSCRIPTION_ID: message["id"]}
        events, events_out = anyio.create_memory_object_stream[Message](64)
        listener = _Listener(honored, frozenset(uris), events, meta)
        self._listeners.append(listener)
        try:
            for uri in uris:
                self._subscribed[uri] = self._subscribed.get(uri, 0) + 1
                if self._subscribed[uri] == 1:
                    await self.ask("resources/subscribe", {"uri": uri})
            ack = {"notifications": honored, "_meta": meta}
            await notify(
                {"jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged", "params": ack}
            )
            async with events_out:
                while self.dead is None:
                    with anyio.move_on_after(PING_INTERVAL):
                        await notify(await events_out.receive())
            return {
                "jsonrpc": "2.0",
                "id": message["id"],
                "result": {"_meta": meta, "resultType": "complete"},
            }
        finally:
            self._listeners.remove(listener)
            events.close()
            with anyio.CancelScope(shield=True):
                for uri in uris:
                    self._subscribed[uri] -= 1
                    if self._subscribed[uri] == 0 and self.dead is None:
                        del self._subscribed[uri]
                        with anyio.move_on_after(5):
                            await self.ask("resources/unsubscribe", {"uri": uri})


StatelessBackend = ModernHttpBackend | SharedBackend


async def open_stateless_backend(settings: Settings, tg: anyio.abc.TaskGroup) -> StatelessBackend:
    """A POST per request when the URL answers `server/discover` listing 2026-07-28, else one shared
    connection, started in `tg` (a BackendError when it cannot start)."""
    if settings.is_url:
        modern = ModernHttpBackend(settings)
        if await modern.probe():
            return modern
        await modern.aclose()
    shared = SharedBackend(settings)
    await tg.start(shared.run)
    if shared.dead:
        raise BackendError(shared.dead)
    return shared
