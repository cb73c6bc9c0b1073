"""In-memory byte pipes and channel pairs: the real relay, driven in-process (tests, fuzzing, embedding).

The channels are the same newline-delimited `_LineChannel` that stdio uses, so framing, strict parsing and
encoding are exercised exactly as on a pipe; only the bytes stay in memory. The raw ends let a test write
any bytes at all (invalid UTF-8, huge or deep lines) and read exactly what the relay wrote.
"""

from __future__ import annotations

import math

import anyio
import anyio.abc
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from ._channels import _LineChannel

__all__ = ["MemoryByteReceive", "MemoryByteSend", "memory_channel_pair", "memory_line_channel", "memory_pipe"]


class MemoryByteSend(anyio.abc.ByteSendStream):
    """The writing end of an in-memory pipe; closing it is EOF for the reader."""

    def __init__(self, stream: MemoryObjectSendStream[bytes]) -> None:
        self._stream = stream

    async def send(self, item: bytes) -> None:
        try:
            await self._stream.send(bytes(item))
        except (anyio.BrokenResourceError, anyio.ClosedResourceError) as exc:
            raise anyio.BrokenResourceError from exc

    async def aclose(self) -> None:
        await self._stream.aclose()


class MemoryByteReceive(anyio.abc.ByteReceiveStream):
    """The reading end of an in-memory pipe; closing it makes the writer's next send a broken pipe."""

    def __init__(self, stream: MemoryObjectReceiveStream[bytes]) -> None:
        self._stream = stream

    async def receive(self, max_bytes: int = 65536) -> bytes:
        while True:
            try:
                chunk = await self._stream.receive()
            except anyio.ClosedResourceError as exc:
                raise anyio.EndOfStream from exc
            if chunk:
                return chunk

    async def aclose(self) -> None:
        await self._stream.aclose()


def memory_pipe() -> tuple[MemoryByteSend, MemoryByteReceive]:
    """An unbounded one-way byte pipe (unbounded so a test that writes before it reads cannot deadlock)."""
    send, receive = anyio.create_memory_object_stream[bytes](math.inf)
    return MemoryByteSend(send), MemoryByteReceive(receive)


def memory_line_channel(receive: MemoryByteReceive, send: MemoryByteSend) -> _LineChannel:
    """A JSON-RPC channel reading one pipe and writing another."""
    return _LineChannel(receive, send)


def memory_channel_pair() -> tuple[_LineChannel, _LineChannel]:
    """Two channels talking to each other, like the two ends of a stdio connection."""
    a_send, b_receive = memory_pipe()
    b_send, a_receive = memory_pipe()
    return _LineChannel(a_receive, a_send), _LineChannel(b_receive, b_send)
