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

The wire (versions, ASGI replies) is `_modern_http`; the two backends are `_stateless_modern` and
`_stateless_shared`. Either way tools/call results go through the same pipeline (dedup, shrink, recovery
store) as the session path, tools/list gains the recover tool, and calls of the recover tool are answered
here.
"""

from __future__ import annotations

import contextvars
import re
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import anyio.abc

from .._errors import BackendError
from .._jsonbytes import loads
from .._voice import McpVoice
from ..core import Call, Pipeline, SessionServices, for_caller, new_pipeline
from ..core._clients import ClientProfile, choose, client_info_of
from ..settings import Settings
from ..transports import (
    BACKEND_GONE,
    INVALID_REQUEST,
    PARSE_ERROR,
    PRINCIPAL_KEY,
    Message,
    error_response,
    list_tools,
)
from ._compressed_front import stateless_ask, stateless_hook
from ._modern_http import MODERN_VERSION, Exchange, log, params_of, respond, respond_json
from ._own_tools import answer_recover, shaped_listing, with_recover_tool
from ._relay import FULL_META_KEY
from ._stateless_modern import ModernHttpBackend
from ._stateless_shared import SharedBackend

__all__ = ["MODERN_VERSION", "StatelessFrontend", "is_stateless_request"]


_NOT_ONE_REQUEST = "Body must be a single JSON-RPC request object"

# The principal of the request being served: set in `handle`, inherited by the tasks it starts, so the
# pipeline and the store a result meets are always its caller's (one tenant never sees another's).
_caller: contextvars.ContextVar[str | None] = contextvars.ContextVar("mcpsqueeze_caller", default=None)
# The conversation the request names (`_meta["mcpsqueeze/conversation"]` or the Mcpsqueeze-Conversation
# header): stateless calls are deduplicated only within one, so a pointer names a result it was shown.
_conversation: contextvars.ContextVar[str | None] = contextvars.ContextVar("mcpsqueeze_conv", default=None)
CONVERSATION_META = "mcpsqueeze/conversation"
_CONVERSATION_RE = re.compile(r"^[A-Za-z0-9_.:-]{1,128}\Z")
_CONVERSATIONS = 64  # conversations whose dedup index (and overlap history) one process keeps, LRU


def is_stateless_request(headers: Any) -> bool:
    """Route as the SDK does: a protocol-version header naming no handshake-era revision is 2026-07-28+."""
    from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

    version = headers.get("mcp-protocol-version")
    return version is not None and version not in HANDSHAKE_PROTOCOL_VERSIONS


def _envelope_rejection(message: Message, headers: Any) -> Message | None:
    """The SDK's validation ladder (envelope keys, routing headers, version) before any backend work."""
    from mcp.shared.inbound import InboundLadderRejection, classify_inbound_request

    verdict = classify_inbound_request(message, headers=dict(headers))
    if isinstance(verdict, InboundLadderRejection):
        return error_response(message["id"], verdict.code, verdict.message, verdict.data)
    return None


class StatelessFrontend:
    """Serves 2026-07-28 requests; one per `wrap` process, shared by every stateless client."""

    def __init__(
        self, settings: Settings, services: SessionServices, tg: anyio.abc.TaskGroup, security: Any
    ) -> None:
        self.settings = settings
        self.services = services
        self.tg = tg
        self.security = security
        self.pipeline: Pipeline = new_pipeline(settings, services, dedup=False)
        self.recover_tool: str | None = (
            "squeeze_recover" if (settings.policy.shrink or settings.policy.dedup) else None
        )
        self.named_tenants = False  # set by HttpFrontend when the token file names tenants
        self._callers: dict[str, tuple[SessionServices, Pipeline]] = {}
        self._conversations: OrderedDict[tuple[str | None, str], Pipeline] = OrderedDict()
        self._calls = 0
        self._backend: ModernHttpBackend | SharedBackend | None = None
        self._backend_lock = anyio.Lock()
        self._names_settled = False  # the recover tool's name, checked against the backend's tools
        self._clients_seen: set[str] = set()  # whose profile choice was logged (once per client name)

    # -- the ASGI entry ----------------------------------------------------------------------------------

    def _for_caller(self) -> tuple[SessionServices, Pipeline]:
        """The store view and pipeline of the current request's caller: without a conversation, one
        that never deduplicates; in one, that conversation's dedup index (shared by replicas via Redis)."""
        principal = _caller.get()
        if principal is None:
            services, pipeline = self.services, self.pipeline
        else:
            if principal not in self._callers:
                services = for_caller(self.services, principal, self.named_tenants)
                pipeline = new_pipeline(
                    self.settings, services, McpVoice(self.recover_tool or "squeeze_recover"), dedup=False
                )
                self._callers[principal] = (services, pipeline)
            services, pipeline = self._callers[principal]
        conversation = _conversation.get()
        if conversation is None:
            return services, pipeline
        key = (principal, conversation)
        if key not in self._conversations:
            self._conversations[key] = new_pipeline(
                self.settings,
                services,
                McpVoice(self.recover_tool or "squeeze_recover"),
                dedup_scope=f"stateless:{principal or '-'}:{conversation}",
            )
            while len(self._conversations) > _CONVERSATIONS:
                self._conversations.popitem(last=False)  # its repeats are shown again: never a false pointer
        self._conversations.move_to_end(key)
        return services, self._conversations[key]

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
            await respond(send, 405, b"", None)
            return
        body = await request.body()
        try:
            message = loads(body)
        except (ValueError, RecursionError):
            await respond_json(send, error_response(None, PARSE_ERROR, "Parse error"))
            return
        if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
            await respond_json(send, error_response(None, INVALID_REQUEST, _NOT_ONE_REQUEST))
            return
        if "id" not in message:
            # 2026-07-28 defines no client-to-server notifications over HTTP; acknowledged and dropped, as
            # the SDK's own modern entry does (cancellation is closing the response stream).
            await respond(send, 202, b"", None)
            return
        if not isinstance(message.get("method"), str):
            await respond_json(send, error_response(None, INVALID_REQUEST, _NOT_ONE_REQUEST))
            return
        params = params_of(message)
        _conversation.set(_conversation_of(params, request.headers))
        rejected_envelope = _envelope_rejection(message, request.headers)
        if rejected_envelope is not None:
            await respond_json(send, rejected_envelope)
            return
        hooked = await stateless_hook(
            self, request, message, body, send
        )  # --compress-tools (_compressed_front.py)
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
            await respond_json(send, await self._answer_recover(message["id"], params))
            return
        try:
            backend = await self._get_backend()
        except BackendError as exc:
            await respond_json(send, error_response(message["id"], BACKEND_GONE, f"mcpsqueeze: {exc}"))
            return
        if message["method"] == "tools/call" and _asks_full(params):
            answer = await self._for_caller()[1].full(self.new_call(params), self._tool_entry(params))
            if answer is not None:  # the stored original, or the error for a tool with side effects
                result = {"resultType": "complete", **answer[0]}
                await respond_json(send, {"jsonrpc": "2.0", "id": message["id"], "result": result})
                return
        await backend.relay(self, Exchange(request, message, body, receive, send))

    def _tool_entry(self, params: dict[str, Any]) -> Callable[[], Awaitable[dict[str, Any] | None]]:
        """How `full` learns the called tool's tools/list entry (its annotations): listed on demand."""

        async def entry() -> dict[str, Any] | None:
            try:
                ask = await stateless_ask(self)

                async def result_of(method: str, params: dict[str, Any]) -> Any:
                    return (await ask(method, params)).get("result")

                listed = await list_tools(result_of)
            except BackendError:
                return None
            return next((t for t in listed if t["name"] == params.get("name")), None)

        return entry

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

    async def _get_backend(self) -> ModernHttpBackend | SharedBackend:
        async with self._backend_lock:
            if self._backend is None or (isinstance(self._backend, SharedBackend) and self._backend.dead):
                backend: ModernHttpBackend | SharedBackend | None = None
                if self.settings.is_url:
                    modern = ModernHttpBackend(self.settings)
                    if await modern.probe():
                        backend = modern
                    else:
                        await modern.aclose()
                if backend is None:
                    shared = SharedBackend(self.settings)
                    await self.tg.start(shared.run)
                    if shared.dead:
                        raise BackendError(shared.dead)
                    backend = shared
                self._backend = backend
            return self._backend

    # -- what the proxy changes --------------------------------------------------------------------------

    def client_of(self, params: dict[str, Any]) -> ClientProfile | None:
        """The profile of the client a 2026-07-28 request names in its `_meta` (each request carries its
        clientInfo; core/_clients.py), or the one the `client` setting names."""
        info = client_info_of(params)
        selection = choose(self.settings.client, info)
        name = info.get("name") if isinstance(info, dict) else None
        key = str(name)[:80]
        if key not in self._clients_seen and len(self._clients_seen) < 256:
            self._clients_seen.add(key)
            log.info("mcpsqueeze: %s", selection.describe())
        return selection.profile

    def new_call(self, params: dict[str, Any]) -> Call:
        self._calls += 1
        arguments = params.get("arguments")
        client = self.client_of(params)
        return Call(
            server=self.services.server_name,
            tool=str(params.get("name")),
            arguments=arguments if isinstance(arguments, dict) else {},
            number=self._calls,
            full=_asks_full(params),
            client=None if client is None else client.for_call(params.get("_meta")),
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
            listed = self._with_recover_tool(response, result)
            return shaped_listing(
                listed, self.services, self.pipeline, self.client_of(params), (self.recover_tool,)
            )
        return response

    def _with_recover_tool(self, response: Message, result: dict[str, Any]) -> Message:
        pipelines = [self.pipeline, *(pipeline for _, pipeline in self._callers.values())]
        pipelines += self._conversations.values()
        self.recover_tool, listed = with_recover_tool(response, result, self.recover_tool, pipelines)
        return listed

    async def _answer_recover(self, request_id: Any, params: dict[str, Any]) -> Message:
        client = self.client_of(params)
        arguments = params.get("arguments") or {}
        result = await answer_recover(self._for_caller()[0], arguments, modern=True, client=client)
        return {"jsonrpc": "2.0", "id": request_id, "result": result}


def _asks_full(params: dict[str, Any]) -> bool:
    meta = params.get("_meta")
    return isinstance(meta, dict) and meta.get(FULL_META_KEY) is True


def _conversation_of(params: dict[str, Any], headers: Any) -> str | None:
    """The conversation a request names (its `_meta` key first, else the header); None when it names
    none, or not in the form of one (letters, digits, `_.:-`, at most 128)."""
    meta = params.get("_meta")
    named = meta.get(CONVERSATION_META) if isinstance(meta, dict) else None
    if named is None:
        named = headers.get("mcpsqueeze-conversation")
    return named if isinstance(named, str) and _CONVERSATION_RE.match(named) else None
