"""In-memory byte pipes and channels: the real relay, driven in-process (tests, fuzzing, embedding).

The channels are the same newline-delimited `_LineChannel` that stdio uses, so framing, strict parsing and
encoding are exercised exactly as on a pipe; only the bytes stay in memory. The raw ends let a test write
any bytes at all (invalid UTF-8, huge or deep lines) and read exactly what the relay wrote.
"""

from __future__ import annotations

import math

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from ._channels import _LineChannel

__all__ = ["MemoryByteReceive", "MemoryByteSend", "memory_line_channel", "memory_pipe"]

#: The writing end of an in-memory pipe; closing it is EOF for the reader.
MemoryByteSend = MemoryObjectSendStream[bytes]
#: The reading end; closing it makes the writer's next send a broken pipe.
MemoryByteReceive = MemoryObjectReceiveStream[bytes]


def memory_pipe() -> tuple[MemoryByteSend, MemoryByteReceive]:
    """An unbounded one-way byte pipe (unbounded so a test that writes before it reads cannot deadlock)."""
    return anyio.create_memory_object_stream[bytes](math.inf)


#: A JSON-RPC channel reading one pipe and writing another: `memory_line_channel(receive, send)`.
memory_line_channel = _LineChannel
