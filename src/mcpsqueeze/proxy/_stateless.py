"""The stateless (MCP 2026-07-28) side of the streamable-HTTP frontend.

A 2026-07-28 request is one self-contained POST (no `initialize`, no session; its version and the client's
capabilities in `params._meta`), answered with JSON, or SSE when notifications come first. `handle` checks it
and answers it with the door's method table and one of two backends, chosen once per process: a POST per
request to a backend that answers `server/discover` (`transports.ModernHttpBackend`), else one shared
connection (`transports.SharedBackend`). Each request is answered in its caller's session; calls are
deduplicated only within a conversation the request names (`_meta["mcpsqueeze/conversation"]` or the
`Mcpsqueeze-Conversation` header), so a pointer only names a result that conversation saw.
"""

from __future__ import annotations

import logging
import re
from typing import Any

import anyio
import anyio.abc

from .._errors import BackendError
from .._jsonbytes import loads
from ..core import Session, SessionServices
from ..settings import Settings
from ..transports import (
    BACKEND_GONE,
    INVALID_REQUEST,
    PARSE_ERROR,
    PRINCIPAL_KEY,
    Message,
    ModernHttpBackend,
    Notify,
    SharedBackend,
    error_response,
    params_of,
    respond,
    respond_json,
    stream_answer,
)
from ._compressed_front import compressed_front
from ._methods import Methods

__all__ = ["StatelessFrontend", "is_stateless_request"]

log = logging.getLogger(__name__)

_NOT_ONE_REQUEST = "Body must be a single JSON-RPC request object"
CONVERSATION_META = "mcpsqueeze/conversation"
_CONVERSATION_RE = re.compile(r"^[A-Za-z0-9_.:-]{1,128}\Z")


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


def _conversation_of(params: dict[str, Any], headers: Any) -> str | None:
    """The conversation a request names (its `_meta` key first, else the header); None when it names
    none, or not in the form of one (letters, digits, `_.:-`, at most 128)."""
    meta = params.get("_meta")
    named = meta.get(CONVERSATION_META) if isinstance(meta, dict) else None
    if named is None:
        named = headers.get("mcpsqueeze-conversation")
    return named if isinstance(named, str) and _CONVERSATION_RE.match(named) else None


class StatelessFrontend:
    """Serves 2026-07-28 requests; one per `wrap` process, shared by every stateless client."""

    def __init__(
        self, settings: Settings, services: SessionServices, tg: anyio.abc.TaskGroup, security: Any
    ) -> None:
        self.settings = settings
        self.tg = tg
        self.security = security
        self.root = Session(settings, services, dedup=False)  # without a conversation: no dedup
        self.methods = Methods(self.root, compressed_front(settings))
        self._backend: ModernHttpBackend | SharedBackend | None = None
        self._backend_lock = anyio.Lock()
        self._names_settled = False  # the recover tool's name, checked against the backend's tools

    async def handle(self, scope: Any, receive: Any, send: Any) -> None:
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
        try:
            message = loads(await request.body())
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
        rejected_envelope = _envelope_rejection(message, request.headers)
        if rejected_envelope is not None:
            await respond_json(send, rejected_envelope)
            return
        params = params_of(message)
        principal = scope.get(PRINCIPAL_KEY)
        conversation = _conversation_of(params, request.headers)
        scope_name = None if conversation is None else f"stateless:{principal or '-'}:{conversation}"
        session = self.root.for_caller(principal, scope_name)
        client = self.root.choose_client(params)
        try:
            backend = await self._get_backend()
        except BackendError as exc:
            if not (message["method"] == "tools/call" and self.methods.ours(message)):
                await respond_json(send, error_response(message["id"], BACKEND_GONE, f"mcpsqueeze: {exc}"))
                return
            backend = None  # (the door answers this call itself)
        if message["method"] == "tools/call" and not self._names_settled and backend is not None:
            await self._settle_recover_tool(backend)
        headers = dict(request.headers)

        async def answer(notify: Notify) -> Message | None:
            async def forward(sent: Message) -> Message | None:
                if backend is None:
                    return await _unavailable(sent["method"], {})
                if isinstance(backend, SharedBackend):
                    return await backend.call(sent, notify)
                name = params_of(sent).get("name")
                routed = headers
                if sent["method"] == "tools/call" and name != params.get("name"):  # an invoke made real
                    routed = {k: v for k, v in headers.items() if not k.startswith("mcp-param-")}
                    routed["mcp-name"] = str(name)
                return await backend.call(sent, notify, routed)

            ask = backend.ask if backend is not None else _unavailable
            return await self.methods.answer(message, session, client, ask, forward)

        await stream_answer(receive, send, answer)

    async def _settle_recover_tool(self, backend: ModernHttpBackend | SharedBackend) -> None:
        """Name the recover tool from the backend's own tools before the first call: round robin may have
        sent the client's tools/list (and its suffixed name) to another replica, so this one must agree
        without waiting for a listing. A backend that cannot list keeps the default; retried next call."""
        from ..core import list_recover_tool
        from ..transports import list_tool_names

        if self.methods.recover_tool is None:
            self._names_settled = True
            return

        async def result_of(method: str, params: dict[str, Any]) -> Any:
            return (await backend.ask(method, params)).get("result")

        try:
            names = await list_tool_names(result_of)
        except Exception as exc:  # the call itself reports a dead backend
            log.debug("could not list the backend's tools: %s", exc)
            return
        self._names_settled = True
        name, _ = list_recover_tool({"tools": [{"name": name} for name in names]}, self.methods.recover_tool)
        self.methods.name_recover_tool(name)

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


async def _unavailable(method: str, params: dict[str, Any]) -> Message:
    return error_response(None, BACKEND_GONE, f"mcpsqueeze: the backend is not available for {method}")
