"""The stateless (MCP 2026-07-28) side of the streamable-HTTP frontend.

A 2026-07-28 request is one self-contained POST: no `initialize`, no `Mcp-Session-Id`, the protocol version
and client capabilities in `params._meta`, one response (JSON, or SSE when notifications come first).
`HttpFrontend` hands every session-less request whose `MCP-Protocol-Version` header is not a handshake-era
version to `StatelessFrontend.handle`. Two ways to the backend, chosen once per process:

- **modern HTTP backend** (`wrap -- URL` whose server answers `server/discover`): each request is forwarded
  as its own POST with the same body and routing headers, and the answer streamed back. What the proxy does
  not change passes through as sent: `InputRequiredResult` and its retry (MRTR), `subscriptions/listen`
  streams, `ttlMs`/`cacheScope`; closing the client's stream closes the backend's (cancellation).
- **handshake-era backend** (a stdio command, or a URL that only speaks 2025-11-25): one shared connection,
  initialised by the proxy, carries every stateless request with proxy-owned ids and progress tokens; the
  2026-07-28 envelope is stripped towards it, `server/discover` is answered from its `initialize` result,
  and results gain the fields 2026-07-28 requires (`resultType`, `ttlMs`/`cacheScope` on listings).

Either way tools/call results go through the same pipeline (dedup, shrink, recovery store) as the session
path, tools/list gains the recover tool, and calls of the recover tool are answered here.
"""

from __future__ import annotations

import contextlib
import contextvars
import itertools
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import anyio
import anyio.abc
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from .._errors import BackendError, RecoveryError, UsageError
from .._jsonbytes import dumps, loads
from ..core import Call, Pipeline, SessionServices, for_caller, list_recover_tool, new_pipeline, recover_call
from ..settings import Settings
from ..transports import PRINCIPAL_KEY, Channel, ChannelClosed, Invalid, Message
from ._compact import stateless_hook
from ._relay import BACKEND_GONE, FULL_META_KEY, TIMEOUT

__all__ = ["MODERN_VERSION", "StatelessFrontend", "is_stateless_request"]

log = logging.getLogger(__name__)

# The principal of the request being served: set in `handle`, inherited by the tasks it starts, so the
# pipeline and the store a result meets are always its caller's (one tenant never sees another's).
_caller: contextvars.ContextVar[str | None] = contextvars.ContextVar("mcpsqueeze_caller", default=None)

MODERN_VERSION = "2026-07-28"
HANDSHAKE_VERSION = "2025-11-25"  # what the proxy speaks to a backend that does not answer server/discover
ENVELOPE_PREFIX = "io.modelcontextprotocol/"
PROTOCOL_VERSION_META = "io.modelcontextprotocol/protocolVersion"
CLIENT_CAPABILITIES_META = "io.modelcontextprotocol/clientCapabilities"
SERVER_INFO_META = "io.modelcontextprotocol/serverInfo"
CACHEABLE = frozenset(
    {"server/discover", "tools/list", "prompts/list", "resources/list", "resources/templates/list"}
)
# Headers a 2026-07-28 intermediary routes on; forwarded to a modern backend as the client sent them.
_FORWARDED = ("mcp-protocol-version", "mcp-method", "mcp-name", "accept", "content-type", "last-event-id")
_SSE_HEADERS = [
    (b"content-type", b"text/event-stream"),
    (b"cache-control", b"no-cache, no-transform"),
    (b"connection", b"keep-alive"),
    (b"x-accel-buffering", b"no"),
]
_PING_INTERVAL = 15.0  # seconds between SSE keepalive comments on the shared-connection path

Send = Callable[[Message], Awaitable[None]]


def is_stateless_request(headers: Any) -> bool:
    """Route as the SDK does: a protocol-version header naming no handshake-era revision is 2026-07-28+."""
    from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

    version = headers.get("mcp-protocol-version")
    return version is not None and version not in HANDSHAKE_PROTOCOL_VERSIONS


def _error(request_id: Any, code: int, message: str, data: Any = None) -> Message:
    err: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        err["data"] = data
    return {"jsonrpc": "2.0", "id": request_id, "error": err}


def _envelope_rejection(message: Message, headers: Any) -> Message | None:
    """The SDK's validation ladder (envelope keys, routing headers, version) before any backend work."""
    from mcp.shared.inbound import InboundLadderRejection, classify_inbound_request

    verdict = classify_inbound_request(message, headers=dict(headers))
    if isinstance(verdict, InboundLadderRejection):
        return _error(message["id"], verdict.code, verdict.message, verdict.data)
    return None


def _status_of(message: Message) -> int:
    from mcp.shared.inbound import ERROR_CODE_HTTP_STATUS

    error = message.get("error")
    if isinstance(error, dict) and isinstance(error.get("code"), int):
        return ERROR_CODE_HTTP_STATUS.get(error["code"], 200)
    return 200


def _sse_event(message: Message) -> bytes:
    return b"event: message\r\ndata: " + dumps(message) + b"\r\n\r\n"


async def _respond(
    send: Any, status: int, body: bytes, content_type: str | None = "application/json"
) -> None:
    # a plain body with its length, as Starlette's Response sends it (no chunked encoding)
    headers = [(b"content-length", str(len(body)).encode())]
    if content_type:
        headers.append((b"content-type", content_type.encode()))
    if status == 405:
        headers.append((b"allow", b"POST"))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body, "more_body": False})


async def _respond_json(send: Any, message: Message) -> None:
    await _respond(send, _status_of(message), dumps(message))


class StatelessFrontend:
    """Serves 2026-07-28 requests; one per `wrap` process, shared by every stateless client."""

    def __init__(
        self, settings: Settings, services: SessionServices, tg: anyio.abc.TaskGroup, security: Any
    ) -> None:
        self.settings = settings
        self.services = services
        self.tg = tg
        self.security = security
        self.pipeline: Pipeline = new_pipeline(settings, services)
        self.recover_tool: str | None = "squeeze_recover" if (settings.shrink or settings.dedup) else None
        self.named_tenants = False  # set by HttpFrontend when the token file names tenants
        self._callers: dict[str, tuple[SessionServices, Pipeline]] = {}
        self._calls = 0
        self._backend: _ModernHttpBackend | _SharedBackend | None = None
        self._backend_lock = anyio.Lock()
        self._names_settled = False  # the recover tool's name, checked against the backend's tools

    # -- the ASGI entry ----------------------------------------------------------------------------------

    def _for_caller(self) -> tuple[SessionServices, Pipeline]:
        """The store view and pipeline (dedup index) of the current request's caller."""
        principal = _caller.get()
        if principal is None:
            return self.services, self.pipeline
        if principal not in self._callers:
            services = for_caller(self.services, principal, self.named_tenants)
            pipeline = new_pipeline(
                self.settings,
                services,
                recover_tool=self.recover_tool or "squeeze_recover",
                dedup_scope=f"stateless:{principal}",
            )
            self._callers[principal] = (services, pipeline)
        return self._callers[principal]

    async def handle(self, scope: Any, receive: Any, send: Any) -> None:
        _caller.set(scope.get(PRINCIPAL_KEY))
        from mcp.server.transport_security import TransportSecurityMiddleware
        from starlette.requests import Request

        request = Request(scope, receive)
        rejected = await TransportSecurityMiddleware(self.security).validate_request(
            request, is_post=request.method == "POST"
        )
        if rejected is not None:
            await rejected(scope, receive, send)
            return
        if request.method != "POST":
            await _respond(send, 405, b"", None)
            return
        body = await request.body()
        try:
            message = loads(body)
        except (ValueError, RecursionError):
            await _respond_json(send, _error(None, -32700, "Parse error"))
            return
        if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
            await _respond_json(send, _error(None, -32600, "Body must be a single JSON-RPC request object"))
            return
        if "id" not in message:
            # 2026-07-28 defines no client-to-server notifications over HTTP; acknowledged and dropped, as
            # the SDK's own modern entry does (cancellation is closing the response stream).
            await _respond(send, 202, b"", None)
            return
        if not isinstance(message.get("method"), str):
            await _respond_json(send, _error(None, -32600, "Body must be a single JSON-RPC request object"))
            return
        params = message.get("params") if isinstance(message.get("params"), dict) else {}
        assert isinstance(params, dict)
        rejected_envelope = _envelope_rejection(message, request.headers)
        if rejected_envelope is not None:
            await _respond_json(send, rejected_envelope)
            return
        hooked = await stateless_hook(self, request, message, body, send)  # --compress-tools (_compact.py)
        if hooked is None:
            return
        request, message, body, params = hooked
        if message["method"] == "tools/call" and not self._names_settled:
            await self._settle_recover_tool()
        if (
            message["method"] == "tools/call"
            and self.recover_tool
            and params.get("name") == self.recover_tool
        ):
            await _respond_json(
                send, await self._answer_recover(message["id"], params.get("arguments") or {})
            )
            return
        try:
            backend = await self._get_backend()
        except BackendError as exc:
            await _respond_json(send, _error(message["id"], BACKEND_GONE, f"mcpsqueeze: {exc}"))
            return
        await backend.relay(self, request, message, body, scope, receive, send)

    async def _settle_recover_tool(self) -> None:
        """Name the recover tool from the backend's own tools before the first call: round robin may have
        sent the client's tools/list (and its suffixed name) to another replica, so this one must agree
        without waiting for a listing. A backend that cannot list keeps the default; retried next call."""
        if not self.recover_tool:
            self._names_settled = True
            return
        try:
            names = await (await self._get_backend()).tool_names()
        except Exception as exc:  # the call itself reports a dead backend
            log.debug("could not list the backend's tools: %s", exc)
            return
        self._names_settled = True
        self._with_recover_tool({}, {"tools": [{"name": name} for name in names]})

    async def _get_backend(self) -> _ModernHttpBackend | _SharedBackend:
        async with self._backend_lock:
            if self._backend is None or (isinstance(self._backend, _SharedBackend) and self._backend.dead):
                backend: _ModernHttpBackend | _SharedBackend | None = None
                if self.settings.is_url:
                    modern = _ModernHttpBackend(self.settings)
                    if await modern.probe():
                        backend = modern
                    else:
                        await modern.aclose()
                if backend is None:
                    shared = _SharedBackend(self.settings)
                    await self.tg.start(shared.run)
                    if shared.dead:
                        raise BackendError(shared.dead)
                    backend = shared
                self._backend = backend
            return self._backend

    # -- what the proxy changes --------------------------------------------------------------------------

    def new_call(self, params: dict[str, Any]) -> Call:
        self._calls += 1
        meta = params.get("_meta")
        arguments = params.get("arguments")
        return Call(
            server=self.services.server_name,
            tool=str(params.get("name")),
            arguments=arguments if isinstance(arguments, dict) else {},
            number=self._calls,
            full=isinstance(meta, dict) and meta.get(FULL_META_KEY) is True,
        )

    async def finish(self, method: str, params: dict[str, Any], response: Message) -> Message:
        """The pipeline for a tools/call result, the recover tool on a tools/list page; all else as is."""
        result = response.get("result")
        if not isinstance(result, dict) or result.get("resultType") == "input_required":
            return response  # errors and MRTR rounds pass untouched
        if method == "tools/call":
            presented, _ = await self._for_caller()[1].present(self.new_call(params), result)
            return response if presented is result else {**response, "result": presented}
        if method == "tools/list":
            return self._with_recover_tool(response, result)
        return response

    def _with_recover_tool(self, response: Message, result: dict[str, Any]) -> Message:
        pipelines = [self.pipeline, *(pipeline for _, pipeline in self._callers.values())]
        self.recover_tool, listed = list_recover_tool(result, self.recover_tool, pipelines)
        return response if listed is result else {**response, "result": listed}

    async def _answer_recover(self, request_id: Any, arguments: Any) -> Message:
        try:
            services = self._for_caller()[0]
            result = await services.workers.run(recover_call, services.store, arguments)
        except (RecoveryError, UsageError) as exc:
            result = {"content": [{"type": "text", "text": f"mcpsqueeze: {exc}"}], "isError": True}
        return {"jsonrpc": "2.0", "id": request_id, "result": {**result, "resultType": "complete"}}


async def _tool_names(ask: Callable[[str, dict[str, Any]], Awaitable[Any]]) -> list[str]:
    """Every tool name the backend lists (all pages, at most 100); an error when it does not list."""
    names: list[str] = []
    cursor = None
    for _ in range(100):
        result = await ask("tools/list", {"cursor": cursor} if cursor else {})
        if not isinstance(result, dict) or not isinstance(result.get("tools"), list):
            raise BackendError("the backend did not list its tools")
        names += [
            t["name"] for t in result["tools"] if isinstance(t, dict) and isinstance(t.get("name"), str)
        ]
        cursor = result.get("nextCursor")
        if not isinstance(cursor, str) or not cursor:
            break
    return names


async def _watch_disconnect(receive: Any, scope: anyio.CancelScope) -> None:
    """Closing the response stream is how a 2026-07-28 client cancels: stop the backend's work then."""
    while True:
        message = await receive()
        if message.get("type") == "http.disconnect":
            scope.cancel()
            return


# -- a backend that speaks 2026-07-28 over HTTP ---------------------------------------------------------


class _ModernHttpBackend:
    """Forwards each stateless request as its own POST; nothing is shared between requests."""

    def __init__(self, settings: Settings) -> None:
        import httpx2

        from ..transports import backend_auth

        self.url = settings.target[0]
        timeout = httpx2.Timeout(30.0, read=settings.timeout if settings.timeout else 300.0)
        self.client = httpx2.AsyncClient(
            headers=dict(settings.headers),
            timeout=timeout,
            follow_redirects=False,
            auth=backend_auth(self.url, settings.headers, settings.oauth),
        )

    async def aclose(self) -> None:
        await self.client.aclose()

    async def probe(self) -> bool:
        """True when the backend answers `server/discover` listing 2026-07-28."""
        try:
            result = await self._ask("server/discover", {})
        except Exception as exc:  # unreachable, TLS, ...: the shared connection reports it properly
            log.debug("server/discover probe failed: %s", exc)
            return False
        versions = result.get("supportedVersions") if isinstance(result, dict) else None
        return isinstance(versions, list) and MODERN_VERSION in versions

    async def tool_names(self) -> list[str]:
        return await _tool_names(self._ask)

    async def _ask(self, method: str, params: dict[str, Any]) -> Any:
        """One request of the proxy's own, in the 2026-07-28 envelope; its result (None if none)."""
        meta = {PROTOCOL_VERSION_META: MODERN_VERSION, CLIENT_CAPABILITIES_META: {}}
        body = {
            "jsonrpc": "2.0",
            "id": f"mcpsqueeze-{method}",
            "method": method,
            "params": {**params, "_meta": meta},
        }
        headers = {
            "mcp-protocol-version": MODERN_VERSION,
            "mcp-method": method,
            "accept": "application/json, text/event-stream",
            "content-type": "application/json",
        }
        response = await self.client.post(self.url, content=dumps(body), headers=headers)
        answer = None
        with contextlib.suppress(ValueError):
            if response.headers.get("content-type", "").startswith("application/json"):
                answer = loads(response.content)
            elif response.headers.get("content-type", "").startswith("text/event-stream"):
                for line in response.text.splitlines():
                    if line.startswith("data:"):
                        answer = loads(line[5:].strip().encode())
        return answer.get("result") if isinstance(answer, dict) else None

    async def relay(
        self,
        front: StatelessFrontend,
        request: Any,
        message: Message,
        body: bytes,
        scope: Any,
        receive: Any,
        send: Any,
    ) -> None:
        headers = {k: v for k, v in request.headers.items() if k in _FORWARDED or k.startswith("mcp-param-")}
        method: str = message["method"]
        params = message.get("params") if isinstance(message.get("params"), dict) else {}
        assert isinstance(params, dict)
        send = _TrackingSend(send)
        with anyio.CancelScope() as cancel:
            async with anyio.create_task_group() as tg:
                tg.start_soon(_watch_disconnect, receive, cancel)
                try:
                    await self._forward(front, method, params, message["id"], body, headers, send)
                except Exception as exc:
                    if not _started(send):
                        await _respond_json(
                            send,
                            _error(
                                message["id"], BACKEND_GONE, f"mcpsqueeze: the backend did not answer: {exc}"
                            ),
                        )
                tg.cancel_scope.cancel()

    async def _forward(
        self,
        front: StatelessFrontend,
        method: str,
        params: dict[str, Any],
        request_id: Any,
        body: bytes,
        headers: dict[str, str],
        send: Any,
    ) -> None:
        tracked = send
        async with self.client.stream("POST", self.url, content=body, headers=headers) as response:
            ctype = response.headers.get("content-type", "")
            if ctype.startswith("application/json"):
                raw = await response.aread()
                try:
                    answer = loads(raw)
                except ValueError:
                    answer = None
                if isinstance(answer, dict) and answer.get("id") == request_id:
                    answer = await front.finish(method, params, answer)
                    raw = dumps(answer)
                await _respond(tracked, response.status_code, raw)
                return
            if not ctype.startswith("text/event-stream"):
                await _respond(tracked, response.status_code, await response.aread(), ctype or None)
                return
            await tracked(
                {"type": "http.response.start", "status": response.status_code, "headers": _SSE_HEADERS}
            )
            async for event in _sse_events(response):
                data = event.get("data")
                if data is not None:
                    with contextlib.suppress(ValueError):
                        parsed = loads(data.encode())
                        if (
                            isinstance(parsed, dict)
                            and "method" not in parsed
                            and parsed.get("id") == request_id
                        ):
                            parsed = await front.finish(method, params, parsed)
                            event = {**event, "data": dumps(parsed).decode()}
                await tracked({"type": "http.response.body", "body": _render_event(event), "more_body": True})
            await tracked({"type": "http.response.body", "body": b"", "more_body": False})


class _TrackingSend:
    """An ASGI send that remembers whether the response has started (so an error can still be a reply)."""

    def __init__(self, send: Any) -> None:
        self.send = send
        self.started = False

    async def __call__(self, message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            self.started = True
        await self.send(message)


def _started(send: Any) -> bool:
    return bool(getattr(send, "started", False))


async def _sse_events(response: Any) -> AsyncIterator[dict[str, str]]:
    """SSE events as {field: value} (data lines joined); comments (keepalives) as {"comment": ...}."""
    event: dict[str, str] = {}
    async for line in response.aiter_lines():
        if line == "":
            if event:
                yield event
            event = {}
            continue
        if line.startswith(":"):
            yield {"comment": line[1:]}
            continue
        name, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if name == "data" and "data" in event:
            event["data"] += "\n" + value
        else:
            event[name] = value
    if event:
        yield event


def _render_event(event: dict[str, str]) -> bytes:
    if "comment" in event:
        return f":{event['comment']}\r\n\r\n".encode()
    lines = [f"{k}: {v}" for k, v in event.items() if k != "data"]
    if "data" in event:
        lines += [f"data: {part}" for part in event["data"].split("\n")]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


# -- a handshake-era backend behind one shared connection -----------------------------------------------


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
        params = message.get("params") if isinstance(message.get("params"), dict) else {}
        assert isinstance(params, dict)
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


class _SharedBackend:
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
        self._pending: dict[str, MemoryObjectSendStream[Message]] = {}
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
        for pid, stream in list(self._pending.items()):
            self._pending.pop(pid, None)
            with contextlib.suppress(anyio.WouldBlock, anyio.BrokenResourceError, anyio.ClosedResourceError):
                stream.send_nowait(_error(pid, BACKEND_GONE, f"mcpsqueeze: {self.dead}"))

    async def _read(self, scope: anyio.CancelScope) -> None:
        assert self.channel is not None
        while True:
            try:
                message = await self.channel.receive()
            except ChannelClosed:
                self.dead = self.dead or "the backend closed the connection"
                log.warning("stateless backend connection ended: %s", self.dead)
                self._fail_pending()
                scope.cancel()
                return
            if isinstance(message, Invalid):
                log.warning("malformed message from the backend: %s", message.error)
                continue
            method = message.get("method")
            if method is not None and "id" in message:
                await self._answer_backend_request(message)
            elif method is not None:
                await self._notification(message)
            else:
                stream = self._pending.pop(str(message.get("id")), None)
                if stream is not None:
                    with contextlib.suppress(anyio.WouldBlock, anyio.BrokenResourceError):
                        stream.send_nowait(message)

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
            reply = _error(
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
        """Send a request with a proxy-owned id; its answer, or a backend-gone error."""
        assert self.channel is not None
        pid = f"mcpsqueeze-{next(self._ids)}"
        send_stream, receive_stream = anyio.create_memory_object_stream[Message](1)
        self._pending[pid] = send_stream
        try:
            if self.dead is not None:
                return _error(pid, BACKEND_GONE, f"mcpsqueeze: {self.dead}")
            try:
                await self.channel.send({**message, "id": pid})
            except ChannelClosed:
                return _error(pid, BACKEND_GONE, "mcpsqueeze: the backend closed the connection")
            try:
                return await receive_stream.receive()
            except anyio.EndOfStream:
                return _error(
                    pid, BACKEND_GONE, f"mcpsqueeze: {self.dead or 'the backend closed the connection'}"
                )
            except anyio.get_cancelled_exc_class():
                with anyio.CancelScope(shield=True), contextlib.suppress(ChannelClosed):
                    await self.channel.send(
                        {
                            "jsonrpc": "2.0",
                            "method": "notifications/cancelled",
                            "params": {"requestId": pid, "reason": "the client closed its stream"},
                        }
                    )
                raise
        finally:
            self._pending.pop(pid, None)
            send_stream.close()
            receive_stream.close()

    async def tool_names(self) -> list[str]:
        async def ask(method: str, params: dict[str, Any]) -> Any:
            return (await self._exchange({"jsonrpc": "2.0", "method": method, "params": params})).get(
                "result"
            )

        return await _tool_names(ask)

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
        params = message.get("params") if isinstance(message.get("params"), dict) else {}
        assert isinstance(params, dict)
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
                    tg.start_soon(_watch_disconnect, receive, cancel)
                    await send({"type": "http.response.start", "status": 200, "headers": _SSE_HEADERS})
                    await send({"type": "http.response.body", "body": _sse_event(ack), "more_body": True})
                    while self.dead is None:
                        note: Message | None = None
                        with anyio.move_on_after(_PING_INTERVAL):
                            note = await events_out.receive()
                        chunk = b": ping\r\n\r\n" if note is None else _sse_event(note)
                        await send({"type": "http.response.body", "body": chunk, "more_body": True})
                    done = {
                        "jsonrpc": "2.0",
                        "id": message["id"],
                        "result": {"_meta": meta, "resultType": "complete"},
                    }
                    await send({"type": "http.response.body", "body": _sse_event(done), "more_body": False})
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
        params = message.get("params") if isinstance(message.get("params"), dict) else {}
        assert isinstance(params, dict)
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
            return _error(message["id"], BACKEND_GONE, f"mcpsqueeze: {self.dead or 'the call ended'}")
        except anyio.get_cancelled_exc_class():
            if not flight.parked:
                flight.scope.cancel()  # the client closed its stream: cancel the backend's work
            raise
        if "input" in item:
            return self._input_required(message["id"], flight, item["input"])
        return {**item["final"], "id": message["id"]}

    async def relay(
        self,
        front: StatelessFrontend,
        request: Any,
        message: Message,
        body: bytes,
        scope: Any,
        receive: Any,
        send: Any,
    ) -> None:
        method: str = message["method"]
        params = message.get("params") if isinstance(message.get("params"), dict) else {}
        assert isinstance(params, dict)
        if method == "server/discover":
            await _respond_json(send, self.discover(message["id"]))
            return
        if method == "subscriptions/listen":
            await self.listen(message, send, receive)
            return
        accepts_sse = "text/event-stream" in request.headers.get("accept", "")
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
                        answer = _error(
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
                tg.start_soon(_watch_disconnect, receive, cancel)
                tg.start_soon(work)
                first: Message | None = None
                with anyio.move_on_after(_PING_INTERVAL):
                    first = await _receive(events_out)
                if first is not None and "final" in first:
                    await _respond_json(send, first["final"])
                else:
                    await send({"type": "http.response.start", "status": 200, "headers": _SSE_HEADERS})
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
                                    "body": _sse_event(item["final"]),
                                    "more_body": False,
                                }
                            )
                            break
                        else:
                            await send(
                                {"type": "http.response.body", "body": _sse_event(item), "more_body": True}
                            )
                        item = None
                        with anyio.move_on_after(_PING_INTERVAL):
                            item = await _receive(events_out)
                tg.cancel_scope.cancel()


async def _receive(stream: MemoryObjectReceiveStream[Message]) -> Message:
    try:
        return await stream.receive()
    except anyio.EndOfStream:
        return {"final": _error(None, BACKEND_GONE, "mcpsqueeze: the backend closed the connection")}


def _leaf(exc: BaseException) -> BaseException:
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


def _version() -> str:
    from .._version import __version__

    return __version__
