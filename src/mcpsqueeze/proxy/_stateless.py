"""The stateless (MCP 2026-07-28) side of the streamable-HTTP frontend.

A 2026-07-28 request is one self-contained POST (no `initialize`, no session; its version and the client's
capabilities in `params._meta`), answered with JSON, or SSE when notifications come first. `handle` checks it
and answers it with the door's method table and one of two backends, chosen once per process: a POST per
request to a backend that answers `server/discover`, else one shared connection
(`transports.open_stateless_backend`). Each request is answered in its caller's session; calls are
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
from ..core import Session, SessionServices, list_recover_tool
from ..settings import Settings
from ..transports import (
    BACKEND_GONE,
    PRINCIPAL_KEY,
    Message,
    Notify,
    StatelessBackend,
    error_response,
    list_tools,
    open_stateless_backend,
    params_of,
    read_request,
    respond_json,
    stream_answer,
)
from ._compressed_front import compressed_front
from ._methods import Methods

__all__ = ["StatelessFrontend"]

log = logging.getLogger(__name__)

CONVERSATION_META = "mcpsqueeze/conversation"
_CONVERSATION_RE = re.compile(r"^[A-Za-z0-9_.:-]{1,128}\Z")


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

    def __init__(self, settings: Settings, services: SessionServices, tg: anyio.abc.TaskGroup) -> None:
        self.settings = settings
        self.tg = tg
        self.root = Session(settings, services, dedup=False)  # without a conversation: no dedup
        self.methods = Methods(self.root, compressed_front(settings))
        self._backend: StatelessBackend | None = None
        self._backend_lock = anyio.Lock()
        # whether the recover tool's name was checked against the backend's tools (no tool: nothing to check)
        self._names_settled = self.methods.recover_tool is None

    async def handle(self, scope: Any, receive: Any, send: Any) -> None:
        read = await read_request(scope, receive, send)
        if read is None:
            return
        message, headers = read
        params = params_of(message)
        principal = scope.get(PRINCIPAL_KEY)
        conversation = _conversation_of(params, headers)
        scope_name = None if conversation is None else f"stateless:{principal or '-'}:{conversation}"
        session = self.root.for_caller(principal, scope_name)
        client = self.root.choose_client(params)
        try:
            async with self._backend_lock:
                if self._backend is None or self._backend.dead:
                    self._backend = await open_stateless_backend(self.settings, self.tg)
            backend = self._backend
        except BackendError as exc:
            if not (message["method"] == "tools/call" and self.methods.ours(message)):
                await respond_json(send, error_response(message["id"], BACKEND_GONE, f"mcpsqueeze: {exc}"))
                return
            backend = None  # (the door answers this call itself)
        if message["method"] == "tools/call" and not self._names_settled and backend is not None:
            await self._settle_recover_tool(backend)

        async def answer(notify: Notify) -> Message | None:
            async def forward(sent: Message) -> Message | None:
                if backend is None:
                    return await _unavailable(sent["method"], {})
                name = params_of(sent).get("name")
                routed = headers
                if sent["method"] == "tools/call" and name != params.get("name"):  # an invoke made real
                    routed = {k: v for k, v in headers.items() if not k.startswith("mcp-param-")}
                    routed["mcp-name"] = str(name)
                return await backend.call(sent, notify, routed)

            ask = backend.ask if backend is not None else _unavailable
            return await self.methods.answer(message, session, client, ask, forward)

        await stream_answer(receive, send, answer)

    async def _settle_recover_tool(self, backend: StatelessBackend) -> None:
        """Name the recover tool from the backend's own tools before the first call: round robin may have
        sent the client's tools/list (and its suffixed name) to another replica, so this one must agree
        without waiting for a listing. A backend that cannot list keeps the default; retried next call."""
        try:
            listed = await list_tools(backend.ask)
        except Exception as exc:  # the call itself reports a dead backend
            log.debug("could not list the backend's tools: %s", exc)
            return
        self._names_settled = True
        name, _ = list_recover_tool({"tools": listed}, self.methods.recover_tool)
        self.methods.name_recover_tool(name)


async def _unavailable(method: str, params: dict[str, Any]) -> Message:
    return error_response(None, BACKEND_GONE, f"mcpsqueeze: the backend is not available for {method}")
