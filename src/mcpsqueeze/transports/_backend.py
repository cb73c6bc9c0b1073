"""The backend port: how a door asks an MCP server something, whatever carries it.

`Backend` is the protocol: a request is always answered, with the server's response or with an error
response that names why there is none (the answer could not be parsed, the server is gone, the request
was cancelled). Adapters:

- `Connection`: over a `Channel` (a spawned command's stdio, or handshake-era streamable HTTP through the
  SDK's transport): proxy-owned ids, one reader, and the answer a parser refused (too deep, not UTF-8,
  not JSON-RPC) turned into an error for the request it answers, once, for every door built on it:
  serve and `Client` (`ServerLink`), and the 2026-07-28 path's shared connection.
- the 2026-07-28 HTTP backend (`proxy/_stateless_modern.ModernHttpBackend.request`): a POST per request.

wrap's relay forwards the agent's own messages over the `Channel` under this port (it rewrites ids and
routes progress itself); it answers an unreadable answer with the same `unreadable_answer`.
"""

from __future__ import annotations

import contextlib
import itertools
import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Protocol

import anyio
from anyio.streams.memory import MemoryObjectSendStream

from ._channels import Channel, ChannelClosed
from ._jsonrpc import BACKEND_GONE, Invalid, Message, error_response, unreadable_answer

__all__ = ["Backend", "Connection"]

log = logging.getLogger(__name__)

OnMessage = Callable[[Message], Awaitable[None]]


class Backend(Protocol):
    """One MCP server as a door asks it: every request gets its response or an error response."""

    @property
    def dead(self) -> str | None:
        """Why the backend cannot answer any more; None while it can."""
        ...

    async def request(self, method: str, params: dict[str, Any] | None = None) -> Message: ...


def _what(message: Message) -> str:
    """A request as an error names it: the method, and the tool of a tools/call."""
    params = message.get("params")
    name = params.get("name") if isinstance(params, dict) and message.get("method") == "tools/call" else None
    return str(message.get("method")) + (f" ({name})" if isinstance(name, str) else "")


class Connection:
    """Requests over one channel, each answered (see the module's docstring); `run` reads the channel.

    `on_request` gets the server's own requests (it must answer them; by default ping is answered and
    anything else refused), `on_notification` its notifications (dropped by default).
    """

    def __init__(
        self,
        channel: Channel,
        *,
        on_request: OnMessage | None = None,
        on_notification: OnMessage | None = None,
    ) -> None:
        self.channel = channel
        self._dead: str | None = None
        self.on_request = on_request or self._refuse
        self.on_notification = on_notification
        self._ids = itertools.count(1)
        self._pending: dict[str, tuple[str, MemoryObjectSendStream[Message]]] = {}  # id -> (what, answer)

    @property
    def dead(self) -> str | None:
        return self._dead

    def end(self, reason: str) -> None:
        """The backend can answer no more (`reason` says why): every waiting request gets that error."""
        self._dead = self._dead or reason
        for pid, (_, stream) in list(self._pending.items()):
            self._pending.pop(pid, None)
            with contextlib.suppress(anyio.WouldBlock, anyio.BrokenResourceError, anyio.ClosedResourceError):
                stream.send_nowait(error_response(pid, BACKEND_GONE, f"mcpsqueeze: {self._dead}"))

    async def run(self) -> None:
        """Read until the channel closes, then answer whatever is still waiting with a backend-gone error."""
        try:
            while True:
                try:
                    message = await self.channel.receive()
                except ChannelClosed:
                    log.debug("backend connection ended: %s", self._dead)
                    return
                if isinstance(message, Invalid):
                    self._invalid(message)
                elif "method" in message and "id" in message:
                    await self.on_request(message)
                elif "method" in message:
                    if self.on_notification is not None:
                        await self.on_notification(message)
                else:
                    self._deliver(message)
        finally:
            self.end("the backend closed the connection")

    def _deliver(self, message: Message) -> None:
        waiting = self._pending.pop(str(message.get("id")), None)
        if waiting is None:
            log.debug("dropped an answer for id %r, which is not waiting", message.get("id"))
            return
        with contextlib.suppress(anyio.WouldBlock, anyio.BrokenResourceError, anyio.ClosedResourceError):
            waiting[1].send_nowait(message)

    def _invalid(self, message: Invalid) -> None:
        """A line no parser of ours reads: when it answers one of our requests, that request's answer is
        an error naming the cause (else it would wait for ever)."""
        waiting = self._pending.get(str(message.id)) if message.id is not None else None
        if waiting is None:
            log.warning("mcpsqueeze: malformed message from the backend: %s", message.error)
            return
        log.warning("mcpsqueeze: the backend's answer to %s could not be read: %s", waiting[0], message.error)
        self._deliver(unreadable_answer(message.id, waiting[0], message.error))

    async def _refuse(self, message: Message) -> None:
        if message["method"] == "ping":
            reply: Message = {"jsonrpc": "2.0", "id": message["id"], "result": {}}
        else:
            reply = error_response(
                message["id"], -32601, f"mcpsqueeze: {message['method']} is not supported by this client"
            )
        with contextlib.suppress(ChannelClosed):
            await self.channel.send(reply)

    async def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        message: Message = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        with contextlib.suppress(ChannelClosed):
            await self.channel.send(message)

    async def request(self, method: str, params: dict[str, Any] | None = None) -> Message:
        message: Message = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        return await self.exchange(message)

    async def exchange(self, message: Message, cancel_reason: str = "cancelled (mcpsqueeze)") -> Message:
        """Send a request (its id ours); its answer, or an error response. Cancelled, the server is told."""
        pid = f"mcpsqueeze-{next(self._ids)}"
        if self._dead is not None:
            return error_response(pid, BACKEND_GONE, f"mcpsqueeze: {self._dead}")
        send_stream, receive_stream = anyio.create_memory_object_stream[Message](1)
        self._pending[pid] = (_what(message), send_stream)
        try:
            try:
                await self.channel.send({**message, "id": pid})
            except ChannelClosed:
                return error_response(pid, BACKEND_GONE, "mcpsqueeze: the backend closed the connection")
            try:
                return await receive_stream.receive()
            except anyio.EndOfStream:
                return error_response(
                    pid, BACKEND_GONE, f"mcpsqueeze: {self._dead or 'the backend closed the connection'}"
                )
            except anyio.get_cancelled_exc_class():
                with anyio.CancelScope(shield=True), contextlib.suppress(ChannelClosed):
                    await self.channel.send(
                        {
                            "jsonrpc": "2.0",
                            "method": "notifications/cancelled",
                            "params": {"requestId": pid, "reason": cancel_reason},
                        }
                    )
                raise
        finally:
            self._pending.pop(pid, None)
            send_stream.close()
            receive_stream.close()


if TYPE_CHECKING:  # mypy checks that each adapter satisfies the port

    def _is_a_backend(connection: Connection) -> Backend:
        return connection
