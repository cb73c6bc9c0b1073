"""The one JSON-RPC correlator: requests of ours to one peer over a channel, each answered once.

Every door that asks a backend goes through a `Correlator`: wrap's relay, serve and `Client` (`ServerLink`),
the 2026-07-28 path's shared connection. Ids are ours (1, 2, 3...), never the requester's: an answer after a
timeout or a cancellation finds no request and is dropped, two requests with one id of the requester's get
their own answers, an id the peer makes up is never delivered. Every request gets its answer or an error
saying why there is none (unreadable, gone, timed out). A progress token is made ours too, and its
notifications go back to the requester with its own token. The peer's own requests and notifications go to the
door's callbacks.
"""

from __future__ import annotations

import contextlib
import itertools
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import anyio

from .._envelope import HANDSHAKE_VERSION
from .._errors import BackendError, MCPSqueezeError
from ._channels import Channel, ChannelClosed, ProcessChannel
from ._jsonrpc import (
    BACKEND_GONE,
    INVALID_REQUEST,
    PARSE_ERROR,
    TIMEOUT,
    Invalid,
    Message,
    error_response,
    unreadable_answer,
    valid_id,
)

__all__ = ["Correlator", "Sent", "error_text", "gone_error", "what_of"]

logger = logging.getLogger("mcpsqueeze.transports")

OnMessage = Callable[[Message], Awaitable[None]]


def what_of(message: Message) -> str:
    """A request as an error names it: the method, and the tool of a tools/call."""
    params = message.get("params")
    name = params.get("name") if isinstance(params, dict) and message.get("method") == "tools/call" else None
    return str(message.get("method")) + (f" ({name})" if isinstance(name, str) else "")


@dataclass(eq=False)
class Sent:
    """A request `Correlator.start` sent under id `our`, waiting for its answer; `our` 0 when it was not
    sent, its `answer` given at once (the peer is gone, or the request could not be encoded)."""

    method: str
    what: str
    our: int = 0
    progress: OnMessage | None = None
    token: Any = None  # the requester's own progress token
    key: Any | None = None
    answer: Message | None = None
    at: float = 0.0
    done: anyio.Event = field(default_factory=anyio.Event)


class Correlator:
    """Requests over one channel, each answered; `run` reads the channel. `on_request` gets the peer's
    requests (default: ping answered, anything else refused), `on_notification` its notifications other
    than our requests' progress (default: dropped); `timeout` (None: none) bounds every request."""

    def __init__(
        self,
        channel: Channel,
        *,
        on_request: OnMessage | None = None,
        on_notification: OnMessage | None = None,
        timeout: float | None = None,
    ) -> None:
        self.channel = channel
        self.on_request = on_request or self._refuse
        self.on_notification = on_notification
        self.timeout = timeout
        self.dead: str | None = None
        self.spoke = False  # the peer has sent something
        self._ids = itertools.count(1)
        self._waiting: dict[int, Sent] = {}
        self._keys: dict[Any, int] = {}
        self._progress: dict[str, Sent] = {}
        self._late: set[int] = set()  # answered already (timeout, cancel, drain): a late answer is dropped

    # -- reading ---------------------------------------------------------------------------------------

    async def run(self) -> None:
        """Read until the channel closes; then every request still waiting gets a backend-gone error."""
        try:
            while True:
                try:
                    message = await self.channel.receive()
                except ChannelClosed:
                    break
                self.spoke = True
                if isinstance(message, Invalid):
                    await self._invalid(message)
                elif "method" in message and "id" in message:
                    await self.on_request(message)
                elif "method" in message:
                    await self._notification(message)
                else:
                    self._deliver(message)
            reason = "the backend closed the connection"
            if isinstance(self.channel, ProcessChannel):
                with anyio.move_on_after(1):
                    await self.channel.wait()
                reason = self.channel.describe_exit()
            self.end(f"{reason} {'mid-session' if self.spoke else 'before answering anything'}")
        finally:
            self.end("the backend connection ended")

    def _deliver(self, message: Message) -> None:
        our = message.get("id")
        waiting = self._waiting.pop(our, None) if type(our) is int else None
        if waiting is None:
            if type(our) is int and our in self._late:
                self._late.discard(our)  # answered already: a late answer goes nowhere
            else:
                logger.warning("mcpsqueeze: dropped an answer for id %.80r, which was never sent", our)
            return
        waiting.answer = message
        waiting.done.set()

    async def _invalid(self, message: Invalid) -> None:
        """A line no parser of ours reads: when it answers one of our requests, that request's answer is
        an error naming the cause (else it would wait for ever); otherwise the peer is told."""
        waiting = self._waiting.get(message.id) if type(message.id) is int else None
        if waiting is None:
            logger.warning("mcpsqueeze: malformed message from the backend: %s", message.error)
            code = PARSE_ERROR if message.error.startswith("Parse error") else INVALID_REQUEST
            await self.send(error_response(None, code, message.error))
            return
        logger.warning(
            "mcpsqueeze: the backend's answer to %s could not be read: %s", waiting.what, message.error
        )
        self._deliver(unreadable_answer(message.id, waiting.what, message.error))

    async def _notification(self, message: Message) -> None:
        params = message.get("params")
        token = params.get("progressToken") if isinstance(params, dict) else None
        progress = message["method"] == "notifications/progress" and isinstance(token, str)
        waiting = self._progress.get(str(token)) if progress else None
        if waiting is not None and waiting.progress is not None:
            assert isinstance(params, dict)
            await waiting.progress({**message, "params": {**params, "progressToken": waiting.token}})
        elif self.on_notification is not None:
            await self.on_notification(message)

    async def _refuse(self, message: Message) -> None:
        if message["method"] == "ping":
            await self.send({"jsonrpc": "2.0", "id": message["id"], "result": {}})
        else:
            text = f"mcpsqueeze: {message['method']} is not supported by this client"
            await self.send(error_response(message["id"], -32601, text))

    # -- requests --------------------------------------------------------------------------------------

    async def request(
        self, message: Message, *, progress: OnMessage | None = None, key: Any = None
    ) -> Message | None:
        """Send `message` (a request; its id is replaced by ours) and return the answer: the peer's (its
        id ours), or an error response (id None). `progress` gets the progress notifications of this
        request; `key` lets `cancel` find it (it then answers None or the answer `cancel` gives)."""
        return await self.wait(await self.start(message, progress=progress, key=key))

    async def start(self, message: Message, *, progress: OnMessage | None = None, key: Any = None) -> Sent:
        """The sending half of `request`: the request is on its way when this returns (so requests sent
        one after another reach the peer in that order); `wait` gives its answer."""
        what = what_of(message)
        method = str(message.get("method"))
        if self.dead is not None:
            return Sent(method, what, answer=gone_error(None, method, self.dead))
        our = next(self._ids)
        waiting = Sent(method, what, our, progress, key=key)
        params = message.get("params")
        meta = params.get("_meta") if isinstance(params, dict) else None
        if progress is not None and isinstance(meta, dict) and valid_id(meta.get("progressToken")):
            assert isinstance(params, dict)
            waiting.token = meta["progressToken"]
            self._progress[f"mcpsqueeze-{our}"] = waiting
            meta = {**meta, "progressToken": f"mcpsqueeze-{our}"}
            message = {**message, "params": {**params, "_meta": meta}}
        self._waiting[our] = waiting
        if key is not None:
            self._keys[key] = our
        why = await self.send({**message, "id": our})
        if why is not None:
            self._forget(our, key)
            answer = error_response(None, INVALID_REQUEST, f"mcpsqueeze: cannot send {what}: {why}")
            return Sent(method, what, answer=answer)
        waiting.at = anyio.current_time()
        return waiting

    async def wait(self, sent: Sent) -> Message | None:
        """The answer to a request `start` sent (see `request`)."""
        our = sent.our
        if not our:
            return sent.answer
        try:
            deadline = sent.at + self.timeout if self.timeout else float("inf")
            with anyio.move_on_after(deadline - anyio.current_time()):
                await sent.done.wait()
            if not sent.done.is_set():  # timed out: the peer is told, a late answer dropped
                self._waiting.pop(our, None)
                self._late.add(our)
                await self._cancel_in_peer(our, f"timed out after {self.timeout:g} s (mcpsqueeze)")
                return error_response(
                    None,
                    TIMEOUT,
                    f"mcpsqueeze: the backend did not answer {sent.what} within {self.timeout:g} s; the "
                    "request was cancelled and the proxy keeps serving. Retry, narrow the request, or raise "
                    "--timeout.",
                )
            return sent.answer
        except anyio.get_cancelled_exc_class():
            if self._waiting.pop(our, None) is not None:
                self._late.add(our)
                with anyio.CancelScope(shield=True):
                    await self._cancel_in_peer(our, "cancelled (mcpsqueeze)")
            raise
        finally:
            self._forget(our, sent.key)

    def _forget(self, our: int, key: Any) -> None:
        self._waiting.pop(our, None)
        if key is not None and self._keys.get(key) == our:
            del self._keys[key]
        self._progress.pop(f"mcpsqueeze-{our}", None)

    async def cancel(self, key: Any, reason: str | None, answer: Message | None = None) -> bool:
        """End the request `key` names: the peer is told (with `reason`), the request answered with
        `answer` (None: nothing to answer), a late answer of the peer's dropped. False when no request of
        that key is waiting."""
        our = self._keys.pop(key, None)
        waiting = self._waiting.pop(our, None) if our is not None else None
        if our is None or waiting is None:
            return False
        self._late.add(our)
        waiting.answer = answer
        waiting.done.set()
        await self._cancel_in_peer(our, reason)
        return True

    def pending(self) -> list[Any]:
        """The keys of the requests still waiting."""
        return list(self._keys)

    async def _cancel_in_peer(self, our: int, reason: str | None) -> None:
        params: dict[str, Any] = {"requestId": our}
        if reason is not None:
            params["reason"] = reason
        await self.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": params})

    def end(self, reason: str) -> None:
        """The peer can answer no more (`reason` says why): every waiting request gets that error."""
        self.dead = self.dead or reason
        for our, waiting in list(self._waiting.items()):
            del self._waiting[our]
            waiting.answer = gone_error(our, waiting.method, self.dead)
            waiting.done.set()
        self._progress.clear()

    # -- sending ---------------------------------------------------------------------------------------

    async def send(self, message: Message) -> str | None:
        """Send to the peer; why the message could not be encoded, or None (sent, or the peer is gone:
        the reader notices and reports it)."""
        if self.dead is not None:
            return None
        with contextlib.suppress(ChannelClosed):
            try:
                await self.channel.send(message)
            except (ValueError, TypeError, RecursionError, MCPSqueezeError) as exc:
                logger.warning("mcpsqueeze: could not send a message to the backend: %s", exc)
                return str(exc)
        return None

    async def ask(self, method: str, params: dict[str, Any]) -> Message:
        """One request of our own: its answer, or an error response."""
        answer = await self.request({"jsonrpc": "2.0", "method": method, "params": params})
        assert answer is not None  # (no key: nothing cancels it but its task)
        return answer

    async def initialize(self, capabilities: dict[str, Any]) -> dict[str, Any]:
        """The MCP handshake of ours as the peer's client (initialize, then initialized): the peer's
        initialize result; a BackendError saying why when it refuses."""
        from .._version import __version__

        client = {"name": "mcpsqueeze", "version": __version__}
        params = {"protocolVersion": HANDSHAKE_VERSION, "capabilities": capabilities, "clientInfo": client}
        answer = await self.ask("initialize", params)
        result = answer.get("result")
        if not isinstance(result, dict):
            raise BackendError(f"the backend refused initialize: {error_text(answer)}")
        await self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return result


def error_text(answer: Message) -> str:
    """What a JSON-RPC error response says (its message), for the error a door reports."""
    error = answer.get("error")
    message = error.get("message") if isinstance(error, dict) else None
    if isinstance(message, str):
        return message
    return f"an answer that is neither a result nor an error: {str(answer)[:200]}"


def gone_error(request_id: Any, method: str, reason: str | None) -> Message:
    """The error a request gets when the backend cannot answer it (golden-tested)."""
    return error_response(
        request_id,
        BACKEND_GONE,
        f"mcpsqueeze: the backend server is not running ({reason}); {method} was not answered. "
        "Restart the MCP server (check its stderr for the cause).",
    )
