"""The relay: one agent connection <-> one backend connection, message for message.

Everything passes through unchanged but what the method table changes (`_methods.py`) and the errors the proxy
itself gives (backend gone, timeout, malformed input). Requests go through a `Correlator` under ids the proxy
owns, and each answer gets the agent's id back (see `_correlator.py` for why).
"""

from __future__ import annotations

import contextlib
import itertools
import logging
from typing import Any

import anyio
import anyio.abc

from .._envelope import MODERN_VERSION, meta_of, without_envelope
from .._errors import MCPSqueezeError
from ..core import Session
from ..transports import (
    INVALID_REQUEST,
    PARSE_ERROR,
    TIMEOUT,
    Channel,
    ChannelClosed,
    Correlator,
    Invalid,
    Message,
    Sent,
    error_response,
    gone_error,
    params_of,
    unreadable_answer,
    valid_id,
    what_of,
    with_id,
)
from ._compressed_front import Ask, CompressedFront
from ._methods import Methods

__all__ = ["Relay"]

logger = logging.getLogger("mcpsqueeze.proxy")

START_FAILURE_GRACE = 5.0  # seconds a backend that failed at start still has its requests answered
FLUSH_SECONDS = 30.0  # after the drain, at most this long to write the last answers
_TIMEOUT_FIRST = 0.5  # with --timeout, each request ends by its own timeout before the drain ends it


def _key(request_id: Any) -> tuple[str, Any]:
    # JSON-RPC ids 1 and "1" are different requests.
    return (type(request_id).__name__, request_id)


class Relay:
    def __init__(
        self,
        front: Channel,
        back: Channel | None,
        session: Session,
        *,
        compressed: CompressedFront | None = None,
        dead_reason: str | None = None,
        drain_grace: float = 10.0,
    ) -> None:
        self.front = front
        self.session = session
        self.methods = Methods(session, compressed)
        self.back = None
        if back is not None:
            self.back = Correlator(
                back,
                on_request=self._to_front,  # the backend's requests (sampling, roots...) go to the agent
                on_notification=self._backend_notification,
                timeout=session.services.timeout,
            )
        self.dead_reason = dead_reason if back is not None else (dead_reason or "no backend")
        self.exit_code = 0 if back is not None else 3
        self.drain_grace = drain_grace  # after the agent closes its input, how long pending requests get
        self._protocol: str | None = None  # what the backend's `initialize` answer negotiated
        self._requests = itertools.count()
        self._sent: dict[int, Sent] = {}  # requests the pump sent already, by the message's identity
        self._running = 0  # requests being answered: the drain waits for them
        self._changed: anyio.Event | None = None
        self._tg: anyio.abc.TaskGroup | None = None

    async def run(self) -> int:
        """Relay until the agent disconnects (or the backend fails before ever answering)."""
        async with anyio.create_task_group() as tg:
            self._tg = tg
            if self.back is not None:
                tg.start_soon(self._read_back, self.back)
            await self._pump_front()
            await self._drain()
            tg.cancel_scope.cancel()
        return self.exit_code

    async def _read_back(self, back: Correlator) -> None:
        await back.run()
        self.dead_reason, self.exit_code = back.dead, 3
        logger.warning(f"mcpsqueeze: {self.dead_reason}; later calls get an error")
        if not back.spoke:  # failing at start: requests arriving soon still get their error, then stop
            await anyio.sleep(START_FAILURE_GRACE)
            assert self._tg is not None
            self._tg.cancel_scope.cancel()

    async def _drain(self) -> None:
        """The agent closed its input: answers still on their way are delivered, within a grace period.
        Then the expiry errors, bounded apart from the grace (a short grace must not cut a shrink in
        progress), so that an agent that stopped reading its stdout cannot keep the proxy alive either."""
        timeout = self.session.services.timeout
        grace = timeout or self.drain_grace
        with anyio.move_on_after(grace + _TIMEOUT_FIRST if timeout else grace):
            await self._idle()
        with anyio.move_on_after(FLUSH_SECONDS):
            for key in self.back.pending() if self.back is not None else []:
                assert self.back is not None
                request_id, what = key[1], key[3]
                why = (
                    f"mcpsqueeze: the agent closed its input and the backend did not answer {what} within "
                    f"{grace:g} s after that; the request was cancelled."
                )
                answer = error_response(request_id, TIMEOUT, why)
                await self.back.cancel(key, "the agent closed its input (mcpsqueeze)", answer)
            await self._idle()

    async def _idle(self) -> None:
        while self._running:
            self._changed = anyio.Event()
            await self._changed.wait()

    # -- agent -> backend ------------------------------------------------------------------------------

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
                assert self._tg is not None
                if self.back is not None and self.methods.forwarded(message):
                    # sent now, in the order the agent sent it (initialize before anything else)
                    self._sent[id(message)] = await self._start(message)
                self._running += 1
                self._tg.start_soon(self._answer, message)
            elif "method" in message:
                await self._front_notification(message)
            elif self.back is not None:  # the agent answering a backend's request
                await self.back.send(self._for_backend(message))
            if self.back is None and self.dead_reason:
                return  # no backend could be opened: the first message is answered, nothing else to serve

    async def _answer(self, message: Message) -> None:
        try:
            ask = self._asking_as(message)
            answer = await self.methods.answer(message, self.session, self.session.client, ask, self._forward)
            if answer is not None:
                await self._to_front(answer)
        finally:
            self._running -= 1
            if self._changed is not None:
                self._changed.set()

    async def _start(self, message: Message) -> Sent:
        """The agent's request sent on under an id of ours (its progress routed back to it)."""
        assert self.back is not None
        request_id = message["id"]

        async def progress(note: Message) -> None:
            await self._to_front(note, request_id)

        key = (_key(request_id), request_id, next(self._requests), what_of(message))
        return await self.back.start(self._for_backend(message), progress=progress, key=key)

    async def _forward(self, message: Message) -> Message | None:
        """The agent's request sent on (now, unless the pump sent it already); its answer with the
        agent's id again (its line kept: an unchanged result is not serialised again)."""
        request_id, method = message["id"], message["method"]
        sent = self._sent.pop(id(message), None)
        if sent is None:
            if self.back is None or self.dead_reason is not None:
                return gone_error(request_id, method, self.dead_reason)
            sent = await self._start(message)
        assert self.back is not None
        answer = await self.back.wait(sent)
        if answer is None:
            return None
        result = answer.get("result")
        if (
            method == "initialize"
            and isinstance(result, dict)
            and isinstance(result.get("protocolVersion"), str)
        ):
            self._protocol = result["protocolVersion"]
        return with_id(answer, request_id)

    def _asking_as(self, message: Message) -> Ask:
        """The door's own requests on behalf of `message`: with its `_meta` (a 2026-07-28 client's
        envelope, which such a backend requires on every request; stripped for an older one)."""
        envelope = {k: v for k, v in meta_of(message.get("params")).items() if k != "progressToken"}

        async def ask(method: str, params: dict[str, Any]) -> Message:
            if self.back is None or self.dead_reason is not None:
                return gone_error(None, method, self.dead_reason)
            request = {"jsonrpc": "2.0", "method": method, "params": {**params, "_meta": envelope}}
            answer = await self.back.request(self._for_backend(request))
            assert answer is not None
            return answer

        return ask

    def _for_backend(self, message: Message) -> Message:
        """Strip 2026-07-28 envelope keys when the backend negotiated an older protocol."""
        params = message.get("params")
        if self._protocol is None or self._protocol >= MODERN_VERSION or not isinstance(params, dict):
            return message
        stripped = without_envelope(params)
        return message if stripped is params else {**message, "params": stripped}

    async def _front_notification(self, message: Message) -> None:
        if self.back is None or self.dead_reason is not None:
            return
        if message["method"] != "notifications/cancelled":
            await self.back.send(self._for_backend(message))
            return
        # The backend knows the request by our id: each pending request with the agent's id is cancelled.
        # An unknown or invalid requestId is dropped: forwarded, it could name another request of ours.
        cancelled = params_of(message).get("requestId")
        if not valid_id(cancelled):
            return
        reason = params_of(message).get("reason")
        for key in self.back.pending():
            if key[0] == _key(cancelled):
                await self.back.cancel(key, reason if isinstance(reason, str) else None)

    # -- backend -> agent ------------------------------------------------------------------------------

    async def _backend_notification(self, message: Message) -> None:
        if message["method"] == "notifications/tools/list_changed" and self.methods.compressed is not None:
            self.methods.compressed.tools = None  # the next compressed answer lists the tools again
        await self._to_front(message)

    async def _to_front(self, message: Message, related: Any = None) -> None:
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
