"""The one path every tool result takes: backend result -> stages -> presented result.

Every door reaches it through its `Session`. A stage reads what it needs of the call from the `Call`
(its `Policy`, the door's voice, the client's profile), returns the result to present and may note what
it did on the `Outcome`, which accounting reads off the response path."""

from __future__ import annotations

import dataclasses
import logging
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

import anyio

from .._clients import ClientProfile, model_view
from .._errors import RecoveryError
from .._jsonbytes import dumps, loads
from .._results import Result, text_of
from .._voice import McpVoice, Voice
from ..accounting import Accountant, CallRecord, new_session_id
from ..recovery import new_response_id
from ..settings import Policy
from ._full import CallsShown, Shown, call_key, first_page, latest, may_run_again, not_run_again
from ._recover import DEFAULT_PAGE_SIZE

if TYPE_CHECKING:
    from ..recovery import RecoveryStore

__all__ = ["Call", "Outcome", "Pipeline", "Result", "Stage", "text_of"]  # Result, text_of: from _results

logger = logging.getLogger(__name__)


@dataclass
class Call:
    """One tools/call as the pipeline sees it."""

    server: str
    tool: str
    arguments: dict[str, Any]
    number: int
    full: bool = False  # the original of this same call (`full`, `_meta["mcpsqueeze/full"]`): _full.py
    started: float = field(default_factory=time.perf_counter)
    policy: Policy = field(default_factory=Policy)  # resolved by the pipeline for (server, tool)
    voice: Voice = field(default_factory=McpVoice)  # the door's words of recovery (the pipeline's)
    # the profile of the client that reads the result (_clients.py); None: any client
    client: ClientProfile | None = None


@dataclass
class Outcome:
    """What the stages did to one result; read by accounting after the response is sent."""

    action: str = "passthrough"  # passthrough | dedup | shrink | toon | error | full
    response_id: str | None = None
    original_file: str | None = None
    report: dict[str, Any] | None = None
    store_failed: str | None = None
    # the id the backend's own result is stored under: the first stage that changed it stored it (a later
    # stage stores what the earlier one made, e.g. a shrunk projection)
    original_id: str | None = None

    def kept(self, action: str, response_id: str, original_file: str | None) -> None:
        """A stage changed the result (`action`) and stored its original under `response_id`."""
        self.action, self.response_id, self.original_file = action, response_id, original_file
        self.original_id = self.original_id or response_id


class Stage(Protocol):
    async def __call__(self, call: Call, result: Result, outcome: Outcome) -> Result: ...


class Pipeline:
    """The ordered stages of one conversation, the door's voice, what each call showed it (for
    `full`), and the hand-off to accounting."""

    def __init__(
        self,
        stages: list[Stage],
        accountant: Accountant | None = None,
        policy_for: Callable[[str, str], Policy] | None = None,
        store: RecoveryStore | None = None,
        voice: Voice | None = None,
        page_size: int | None = None,
        scope: str | None = None,
    ) -> None:
        self.stages = stages
        self.accountant = accountant
        self.policy_for = policy_for
        self.store = store  # where the stages keep originals (None: they keep none)
        self.voice: Voice = voice or McpVoice()
        self.page_size = page_size  # the recover tool's page size (its pages bring the rest of a `full`)
        self.shown = CallsShown()
        # the conversation's name in a store with a layer every replica reads: what each call showed is kept
        # there too (_full.py); None: it is kept here only
        self.scope = scope if store is not None and store.remote else None
        self.session = new_session_id()  # call numbers restart per pipeline: the stats file tells them apart

    async def full(
        self, call: Call, tool: Callable[[], Awaitable[Mapping[str, Any] | None]]
    ) -> tuple[Result, Outcome] | None:
        """`full` for `call` (_full.py): the stored original of the last same call, the error for a tool that
        may have side effects, or None when the tool is to run. `tool()` gives its tools/list entry."""
        key = call_key(call.server, call.tool, call.arguments)
        shown = latest(self.shown.last(key), await self._shared(key))
        gone = None
        if shown is not None and shown.response_id is not None and self.store is not None:
            try:
                original = loads(await anyio.to_thread.run_sync(self.store.get, shown.response_id))
            except (RecoveryError, ValueError, RecursionError) as exc:
                gone = str(exc)
            else:
                if isinstance(original, dict):
                    return await self.present(call, original, stored=shown.response_id)
                gone = "the stored original is not a tool result"
        if may_run_again(await tool()):
            return None
        return not_run_again(call.tool, shown, gone), Outcome(action="error")

    async def present(
        self, call: Call, result: Result, *, stored: str | None = None
    ) -> tuple[Result, Outcome]:
        """The result to show for `call`; a failing stage never loses the result (it passes unchanged).
        `stored`: the id under which `result` is already kept (a `full` answered from the store).

        An error is shown as it came, unless the client's profile keeps less of it: then it is shrunk
        (not deduplicated, projected or reshaped), its original kept, still an error. A `full` answer
        is the original, or for a client that keeps less, its first page (`first_page`)."""
        started = time.perf_counter()
        outcome = Outcome(response_id=stored)
        error = result.get("isError") is True
        if error and call.client is not None:
            call.client = call.client.for_error()
        if self.policy_for is not None:
            call.policy = self.policy_for(call.server, call.tool)
        # a user's budget is an upper bound under the client's profile
        cap = None if call.client is None else call.client.answer_limits().budget
        if cap is not None and cap < call.policy.budget:
            call.policy = dataclasses.replace(call.policy, budget=cap)
        if error:  # shrunk if need be, never deduplicated, projected or reshaped
            call.policy = dataclasses.replace(
                call.policy, dedup=False, toonify=False, query=None, drop_duplicate_structured=False
            )
        call.voice = self.voice
        before_text = ""
        # Counting starts now, in the counter's thread, beside the stages; it never holds the call up, however
        # far behind it is (counting is accounting, not a gate). What is counted is what the client's model
        # reads of the result (the JSON of structuredContent, for some clients).
        if self.accountant is not None:
            before_text, seen = model_view(result, call.client)
            self.accountant.begin(before_text)
        try:
            view = before_text if self.accountant is not None else None
            presented, outcome = await self._through_stages(call, result, outcome, error, view)
        except BaseException:  # a cancelled call is never recorded: its text is not kept for it
            if self.accountant is not None:
                self.accountant.forget(before_text)
            raise
        if self.accountant is not None:
            after_text = before_text if presented is result else model_view(presented, call.client)[0]
            self.accountant.record(
                CallRecord(
                    tool=call.tool,
                    number=call.number,
                    server=call.server,
                    action=outcome.action,
                    before_text=before_text,
                    after_text=after_text,
                    added_latency_ms=(time.perf_counter() - started) * 1000,
                    response_id=outcome.response_id,
                    report=outcome.report,
                    store_failed=outcome.store_failed,
                    session=self.session,
                    call_latency_ms=(time.perf_counter() - call.started) * 1000,
                    client=None if call.client is None else call.client.name,
                    seen=seen,
                )
            )
        return presented, outcome

    async def _through_stages(
        self, call: Call, result: Result, outcome: Outcome, error: bool, view: str | None
    ) -> tuple[Result, Outcome]:
        """`view`: what the client's model reads of `result`, when `present` has it already."""
        presented = result
        if error and (call.client is None or call.client.answer_limits().fits(text_of(result))):
            outcome.action = "error"
        elif call.full and not error:
            outcome.action = "full"
            presented = await self._first_page(call, result, outcome, view)
        else:
            try:
                for stage in self.stages:
                    presented = await stage(call, presented, outcome)
            except Exception as exc:  # a bug in a stage must never cost the agent its result
                logger.warning(f"mcpsqueeze: result stage failed ({exc!r}); result passed through")
                presented, outcome = result, Outcome()
            if error and outcome.action == "passthrough":
                outcome.action = "error"
        if not call.full:  # what this call showed: a later `full` answers from it
            key = call_key(call.server, call.tool, call.arguments)
            shown = Shown(call.number, outcome.original_id or outcome.response_id, time.time())
            self.shown.note(key, shown)
            await self._share(key, shown)
        return presented, outcome

    async def _share(self, key: str, shown: Shown) -> None:
        if self.scope is None:
            return
        assert self.store is not None
        try:
            await anyio.to_thread.run_sync(self.store.remember_call, self.scope, key, shown.record())
        except RecoveryError as exc:  # this replica's own record still answers its `full`
            logger.debug("mcpsqueeze: the record of a call was not shared: %s", exc)

    async def _shared(self, key: str) -> Shown | None:
        """The shared store's record of the last same call in this conversation, by any replica."""
        if self.scope is None:
            return None
        assert self.store is not None
        try:
            record = await anyio.to_thread.run_sync(self.store.last_call, self.scope, key)
        except RecoveryError:
            return None
        return None if record is None else Shown.from_record(record)

    async def _first_page(self, call: Call, result: Result, outcome: Outcome, view: str | None) -> Result:
        """A `full` answer as the call's client keeps it: the original, or its first page that fits
        (the original stored first, when it is not yet: no page without the rest)."""
        client = call.client
        if client is None:
            return result
        if client.answer_limits().fits(model_view(result, client)[0] if view is None else view):
            return result
        file = None
        if outcome.response_id is None:
            store = self.store
            if store is None:
                return result
            response_id = new_response_id()
            try:  # a large original is encoded off the event loop, with its write
                file = await anyio.to_thread.run_sync(lambda: store.put(response_id, dumps(result)))
            except RecoveryError as exc:
                outcome.store_failed = str(exc)
                return result
            outcome.response_id = response_id
        page_size = self.page_size or DEFAULT_PAGE_SIZE
        rest = client.answer_limits(client.declared_size(page_size))
        page = await anyio.to_thread.run_sync(
            first_page, result, outcome.response_id, file, client, call.voice, page_size, rest
        )
        return result if page is None else page
