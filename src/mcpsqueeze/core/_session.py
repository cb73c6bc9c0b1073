"""`Session`: one conversation's way through the core, the one object every door holds.

A door asks it `present_outcome` (a backend's result), `full_outcome` (the original of the same call, before
any backend runs) and `answer_recover` (from the store). The session numbers the calls, holds the door's voice
(on its pipeline) and the client's profile, keeps token counting waiting while a call is answered (`working`),
and gives each caller a session of its own (`for_caller`): no conversation is answered with another's
originals or pointers.
"""

from __future__ import annotations

import contextlib
import logging
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Iterator, Mapping
from typing import Any

from .._clients import ClientProfile, choose, client_info_of
from .._errors import RecoveryError, UsageError
from .._voice import Voice
from ..settings import Settings
from ._full import listed_entry
from ._pipeline import Call, Outcome, Result
from ._recover import DEFAULT_PAGE_SIZE, recover
from ._request import RecoverRequest
from ._services import SessionServices, build_services, for_caller, new_pipeline

__all__ = ["CONVERSATIONS", "Session"]

logger = logging.getLogger(__name__)

CONVERSATIONS = 64  # named conversations whose dedup index (and overlap history) one session keeps, LRU
_LOGGED_CLIENTS = 256  # client names whose profile choice is logged (once each)

ToolEntry = Callable[[], Awaitable[Mapping[str, Any] | None]]


class Session:
    """One conversation: its pipeline (stages, voice, what each call showed), its call numbers, its
    client's profile, and the sessions of its callers."""

    def __init__(
        self,
        settings: Settings,
        services: SessionServices | None = None,
        voice: Voice | None = None,
        *,
        dedup_scope: str | None = None,
        dedup: bool = True,
        sticky: bool = False,
    ) -> None:
        """`dedup_scope` names the conversation in a shared store; `sticky`: it lives on this replica only
        (a session the client holds here), so the record of its calls is not shared with the others."""
        self.settings = settings
        self.services = services if services is not None else build_services(settings)
        self.pipeline = new_pipeline(
            settings, self.services, voice, dedup_scope, dedup, shared_calls=not sticky
        )
        self.calls = 0
        self.named_tenants = False  # the door's token file names tenants: their local originals kept apart
        # The profile of the client on the other end: the `client` setting's, until the door learns who
        # the client is (wrap: its `initialize`)
        self.client: ClientProfile | None = choose(settings.client, None).profile
        self._dedup = dedup
        self._callers: OrderedDict[tuple[str | None, str | None], Session] = OrderedDict()
        self._logged: set[str] = set()

    @property
    def voice(self) -> Voice:
        return self.pipeline.voice

    def name_recover_tool(self, name: str) -> None:
        """From now on the voice names the recover tool `name` (the backend may own `squeeze_recover`),
        in this session and its callers'."""
        for session in (self, *self._callers.values()):
            session.pipeline.voice = session.pipeline.voice.named(name)

    def choose_client(self, params: Any) -> ClientProfile | None:
        """The profile of the client an `initialize` (or a 2026-07-28 request's `_meta`) names, under
        the `client` setting; the choice is logged once per client name."""
        info = client_info_of(params)
        selection = choose(self.settings.client, info)
        name = str(info.get("name") if isinstance(info, dict) else None)[:80]
        if name not in self._logged and len(self._logged) < _LOGGED_CLIENTS:
            self._logged.add(name)
            logger.info("mcpsqueeze: %s", selection.describe())
        return selection.profile

    @contextlib.contextmanager
    def working(self) -> Iterator[None]:
        """A call is being answered (its backend works, or its result is presented): token counting,
        which shares the cores, waits until it is done."""
        accountant = self.services.accountant
        accountant.busy(+1)
        try:
            yield
        finally:
            accountant.busy(-1)

    def _call(self, server: str | None, tool: str, arguments: Any, full: bool, client: Any) -> Call:
        self.calls += 1
        return Call(
            server=self.services.server_name if server is None else server,
            tool=tool,
            arguments=arguments if isinstance(arguments, dict) else {},
            number=self.calls,
            full=full,
            client=client,
        )

    async def present_outcome(
        self,
        server: str | None,
        tool: str,
        arguments: Any,
        result: Result,
        *,
        full: bool = False,
        client: ClientProfile | None = None,
    ) -> tuple[Result, Outcome]:
        """The result to show for one call of `tool` (`server` None: the door's backend), and what the
        stages did; `full`: shown unshrunk (a `full` call that ran); `client`: who reads it (default:
        the session's client)."""
        call = self._call(server, tool, arguments, full, self.client if client is None else client)
        with self.working():
            return await self.pipeline.present(call, result)

    async def full_outcome(
        self,
        server: str | None,
        tool: str,
        arguments: Any,
        *,
        annotations: Mapping[str, Any] | None = None,
        entry: ToolEntry | None = None,
        client: ClientProfile | None = None,
    ) -> tuple[Result, Outcome] | None:
        """`full` for one call, before any backend runs (_full.py): the stored original of the last same call,
        the error for a tool that may have side effects, or None when the tool is to run (then present its
        result with `full=True`). Whether it may run comes from `annotations`, or `entry()` (asked only
        then)."""
        call = self._call(server, tool, arguments, True, self.client if client is None else client)
        if entry is None:
            entry = listed_entry([{"name": tool, "annotations": annotations}] if annotations else [], tool)
        with self.working():
            return await self.pipeline.full(call, entry)

    def answer_recover(
        self, arguments: object, page_size: int | None = None, *, client: ClientProfile | None = None
    ) -> dict[str, Any]:
        """The recover tool's answer to `arguments` (or a RecoverRequest) from the store; with `page_size`, a
        longer answer is its first page; for a client profile, answers fit what it keeps of our tool.
        RecoveryError or UsageError when it cannot be answered."""
        request = arguments if isinstance(arguments, RecoverRequest) else RecoverRequest.parse(arguments)
        client = self.client if client is None else client
        fit = None  # (a client's profile: every answer and page fits what it keeps of our tool)
        if client is not None:
            fit = client.answer_limits(client.declared_size(page_size or DEFAULT_PAGE_SIZE))
        return recover(self.services.store, request, page_size, fit, client)

    def recover_tool_answer(
        self, arguments: object, page_size: int | None = None, client: ClientProfile | None = None
    ) -> dict[str, Any]:
        """`answer_recover` as an MCP door answers a call of the recover tool: a refused request or a
        missing original is an `isError` result saying why, never an exception that could end the session."""
        try:
            return self.answer_recover(arguments, page_size, client=client)
        except (RecoveryError, UsageError) as exc:
            return {"content": [{"type": "text", "text": f"mcpsqueeze: {exc}"}], "isError": True}

    def stored(self, response_id: str) -> bytes:
        """The stored original, exactly as kept (counted as a recovery)."""
        if self.services.store is None:
            raise RecoveryError("this session keeps no originals (shrink and dedup are off)")
        return self.services.store.get(response_id)

    def for_caller(
        self,
        principal: str | None,
        conversation: str | None = None,
        *,
        keep: bool = True,
        sticky: bool = False,
    ) -> Session:
        """The session of one caller (a bearer token's principal) and, when it names one, one of its
        conversations (then with a dedup index of its own, `conversation` naming it in a shared store).
        Kept for later requests unless `keep` is False; at most `CONVERSATIONS` named conversations.
        `sticky`: the conversation never reaches another replica (a 2025-11-25 session), so the record
        of what its calls showed stays here (sharing it would cost each call a write nobody reads)."""
        if principal is None and conversation is None:
            return self
        key = (principal, conversation)
        session = self._callers.get(key)
        if session is None:
            services = for_caller(self.services, principal, self.named_tenants)
            dedup = self._dedup or conversation is not None
            session = Session(
                self.settings, services, self.voice, dedup_scope=conversation, dedup=dedup, sticky=sticky
            )
            session.client = self.client
            if not keep:
                return session
            self._callers[key] = session
            named = [k for k in self._callers if k[1] is not None]
            if len(named) > CONVERSATIONS:  # its repeats are shown again: never a pointer to nothing
                del self._callers[named[0]]
        self._callers.move_to_end(key)
        return session

    def close(self) -> None:
        """Finish background token counting (the stores are dropped with the object)."""
        self.services.accountant.close()
