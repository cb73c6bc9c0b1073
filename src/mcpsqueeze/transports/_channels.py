"""Message channels: one JSON-RPC peer each, carrying plain dicts, so what the proxy does not change reaches
the other side field for field. Newline-delimited stdio (our own, or a child process's, over raw fds) and
the SDK's streamable-HTTP streams of `SessionMessage`, adapted to dicts at the edge.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import sys
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any, Protocol

import anyio
import anyio.abc

from .._errors import BackendError, first_leaf
from .._spawn import spawn
from ..settings import Settings
from ._jsonrpc import Invalid, Message, line_of, parse_line

__all__ = [
    "Channel",
    "ChannelClosed",
    "ProcessChannel",
    "SessionMessageChannel",
    "StdioChannel",
    "open_backend",
    "open_channel",
]

MAX_LINE = 1 << 31  # one message may be huge (a 50 MB result); the OS pipe, not us, is the limit
_READ = 1 << 20  # bytes asked of a descriptor at once
_OFFLOAD_BYTES = 1 << 20  # messages above ~1 MB are (de)serialised in a worker thread
_FINISH_LINE_SECONDS = 5.0


class ChannelClosed(Exception):
    """The peer went away (EOF or broken pipe)."""


class Channel(Protocol):
    async def receive(self) -> Message | Invalid: ...

    async def send(self, message: Message, related_request_id: Any = None) -> None: ...

    async def aclose(self) -> None: ...


def _looks_big(message: Message) -> bool:
    """Cheap size guess without serialising: the text of a result's content blocks."""
    result = message.get("result")
    content = result.get("content") if isinstance(result, dict) else None
    if not isinstance(content, list):
        return False
    size = 0
    for block in content:
        if isinstance(block, dict):
            value = block.get("text") or block.get("data") or ""
            size += len(value) if isinstance(value, str) else 0
    return size > _OFFLOAD_BYTES


class _LineReader:
    """Newline-delimited lines from a byte stream, each handed over as the buffer it was read into: a
    line is held once (not as a buffer, a slice and bytes); only what followed the newline is copied."""

    def __init__(self, stream: anyio.abc.ObjectReceiveStream[bytes] | None) -> None:
        self._stream = stream
        self._buffer = bytearray()
        self._searched = 0  # bytes of the buffer known to hold no newline

    async def receive_line(self) -> bytearray:
        """The next whole line; no line within `MAX_LINE` bytes is an error."""
        while (index := self._buffer.find(b"\n", self._searched)) < 0:
            self._searched = len(self._buffer)
            if len(self._buffer) >= MAX_LINE:
                raise anyio.DelimiterNotFound(MAX_LINE)
            await self._fill()
        line, self._buffer = self._buffer, self._buffer[index + 1 :]
        del line[index:]
        self._searched = 0
        return line

    async def _fill(self) -> None:
        assert self._stream is not None
        self._buffer += await self._stream.receive()


class _FdLineReader(_LineReader):
    """Lines from a non-blocking file descriptor, read by a callback the event loop runs when it is readable:
    registered once, not per line (no epoll registration, failed read and bookkeeping per message). With a
    whole line buffered and nobody waiting it stops reading until the next `receive_line`. A descriptor
    epoll cannot watch (a regular file) is simply read."""

    def __init__(self, fd: int) -> None:
        super().__init__(None)
        self._fd = fd
        os.set_blocking(fd, False)
        self._eof = False
        self._error: OSError | None = None
        self._waiter: asyncio.Future[None] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._watching = False
        self._direct = False  # epoll refused the fd: plain reads

    def _on_readable(self) -> None:
        try:
            data = os.read(self._fd, _READ)
        except BlockingIOError:
            return
        except OSError as exc:
            data, self._error = b"", exc
        if data:
            self._buffer += data
            if self._waiter is None and self._buffer.find(b"\n", self._searched) >= 0:
                self.unwatch()  # a whole line waits for its reader: read more when it is taken
        else:
            self._eof = True
            self.unwatch()
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    def _watch(self) -> bool:
        if self._watching or self._direct:
            return self._watching
        loop = self._loop = asyncio.get_running_loop()
        try:
            loop.add_reader(self._fd, self._on_readable)
        except (OSError, ValueError):  # a regular file (EPERM): reading it never blocks
            self._direct = True
            return False
        self._watching = True
        return True

    def unwatch(self) -> None:
        if self._watching and self._loop is not None:
            self._watching = False
            with contextlib.suppress(Exception):  # the loop may be closing
                self._loop.remove_reader(self._fd)

    async def _fill(self) -> None:
        if self._error is not None:
            raise self._error
        if self._eof:
            raise anyio.EndOfStream
        if not self._watch():
            await anyio.sleep(0)  # (a plain file: let the loop run between reads)
            self._on_readable()
            return
        self._waiter = asyncio.get_running_loop().create_future()
        try:
            await self._waiter
        finally:
            self._waiter = None


class _LineChannel:
    """Newline-delimited JSON over a byte stream pair (or a raw file descriptor to read)."""

    def __init__(
        self, receive: anyio.abc.ObjectReceiveStream[bytes] | int, send: anyio.abc.ObjectSendStream[bytes]
    ) -> None:
        self._receive = _FdLineReader(receive) if isinstance(receive, int) else _LineReader(receive)
        self._send = send
        self._send_lock = anyio.Lock()

    async def receive(self) -> Message | Invalid:
        while True:
            try:
                line = await self._receive.receive_line()
            except (anyio.EndOfStream, anyio.IncompleteRead, anyio.ClosedResourceError, OSError) as exc:
                raise ChannelClosed from exc
            if len(line) > _OFFLOAD_BYTES:  # parsing 50 MB takes ~100 ms: never on the event loop
                return await anyio.to_thread.run_sync(parse_line, line)
            if line.strip():
                return parse_line(line)

    async def send(self, message: Message, related_request_id: Any = None) -> None:
        if _looks_big(message):
            data = await anyio.to_thread.run_sync(line_of, message)
        else:
            data = line_of(message)
        try:
            if isinstance(self._send, _FdSend) and not self._send_lock.locked():
                # A pipe with room takes the whole line in one write, here and now: no lock, no await (the
                # event loop runs nothing else meanwhile, so no other line can come between).
                written = self._send.write_now(data)
                if written == len(data):
                    return
                if written:  # part of the line is out: the rest goes before any other line, even if cancelled
                    self._send_lock.acquire_nowait()
                    try:
                        await self._send.finish(memoryview(data)[written:])
                    finally:
                        self._send_lock.release()
                    return
            async with self._send_lock:
                await self._send.send(data)
        except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError) as exc:
            raise ChannelClosed from exc

    async def aclose(self) -> None:
        if isinstance(self._receive, _FdLineReader):
            self._receive.unwatch()
        with contextlib.suppress(Exception):
            await self._send.aclose()


class _FdSend(anyio.abc.ObjectSendStream[bytes]):
    def __init__(self, fd: int) -> None:
        self._fd = fd
        os.set_blocking(fd, False)

    def write_now(self, data: bytes | memoryview) -> int:
        """Write what the pipe takes now, without waiting: the bytes written (0 when it is full)."""
        try:
            return os.write(self._fd, data)
        except BlockingIOError:
            return 0
        except (BrokenPipeError, ConnectionResetError) as exc:
            raise anyio.BrokenResourceError from exc

    async def send(self, item: bytes) -> None:
        while not (written := self.write_now(item)):
            await anyio.wait_writable(self._fd)  # nothing written yet: cancelling here is clean
        if written < len(item):
            await self.finish(memoryview(item)[written:])

    async def finish(self, view: memoryview) -> None:
        """Once part of a line is out, finish it even when cancelled (a cut line is invalid JSON), within
        a bound in case the reader has stopped reading."""
        with anyio.CancelScope(shield=True), anyio.move_on_after(_FINISH_LINE_SECONDS):
            while view := view[self.write_now(view) :]:
                await anyio.wait_writable(self._fd)

    async def aclose(self) -> None:
        with contextlib.suppress(OSError):
            os.close(self._fd)


class StdioChannel(_LineChannel):
    """Our own stdin/stdout, claimed for the protocol: fd 1 points at stderr, so a stray print cannot corrupt
    the stream the agent reads."""

    def __init__(self) -> None:
        stdin = os.dup(0)
        stdout = os.dup(1)
        os.dup2(2, 1)
        sys.stdout = sys.stderr
        super().__init__(stdin, _FdSend(stdout))


_EXIT_GRACE = 1.0  # seconds a backend has to exit once its stdin is closed
_TERM_GRACE = 0.5  # seconds after SIGTERM before SIGKILL


class ProcessChannel(_LineChannel):
    """A backend server spawned as a child, speaking over its stdin/stdout; its stderr stays ours."""

    def __init__(self, process: subprocess.Popen[bytes]) -> None:
        assert process.stdout is not None and process.stdin is not None
        super().__init__(os.dup(process.stdout.fileno()), _FdSend(os.dup(process.stdin.fileno())))
        process.stdin.close()
        process.stdout.close()
        self.process = process

    def describe_exit(self) -> str:
        code = self.process.returncode
        if code is None:
            return "the backend closed its stdout"
        if code < 0:
            with contextlib.suppress(ValueError):
                return f"the backend was killed by {signal.Signals(-code).name}"
        return f"the backend exited with code {code}"

    async def wait(self) -> int:
        while (code := self.process.poll()) is None:  # only at shutdown or failure: polling is enough
            await anyio.sleep(0.01)
        return code

    async def aclose(self) -> None:
        # shielded from the first await: closed from a cancelled scope (serve stopping), the child must
        # still be reaped, and killed if it will not exit. Its stdin closed, a server has `_EXIT_GRACE`
        # to end, then `_TERM_GRACE` after SIGTERM: a backend never outlives its session by 2 s.
        with anyio.CancelScope(shield=True):
            await super().aclose()
            with anyio.move_on_after(_EXIT_GRACE):
                await self.wait()
                return
            with contextlib.suppress(ProcessLookupError):
                self.process.terminate()
            with anyio.move_on_after(_TERM_GRACE):
                await self.wait()
                return
            with contextlib.suppress(ProcessLookupError):
                self.process.kill()
            await self.wait()


class SessionMessageChannel:
    """Adapts the SDK's `SessionMessage` streams (streamable HTTP) to plain dicts."""

    def __init__(self, read: Any, write: Any, *, server_side: bool = False) -> None:
        from mcp.shared.message import ServerMessageMetadata, SessionMessage
        from mcp_types import JSONRPCMessage
        from pydantic import TypeAdapter

        self._read = read
        self._write = write
        self._adapter: TypeAdapter[Any] = TypeAdapter(JSONRPCMessage)
        self._session_message = SessionMessage
        self._metadata = ServerMessageMetadata if server_side else None

    async def receive(self) -> Message | Invalid:
        try:
            item = await self._read.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError) as exc:
            raise ChannelClosed from exc
        if isinstance(item, Exception):
            return Invalid(f"Parse error: {item}")
        dumped: Message = item.message.model_dump(by_alias=True, mode="json", exclude_unset=True)
        return dumped

    async def send(self, message: Message, related_request_id: Any = None) -> None:
        try:
            model = self._adapter.validate_python(message)
        except Exception as exc:  # a message the SDK transport cannot carry
            raise BackendError(f"cannot encode message for streamable HTTP: {exc}") from exc
        metadata: Any = None
        if self._metadata is not None and related_request_id is not None:
            metadata = self._metadata(related_request_id=related_request_id)
        elif self._metadata is None:
            metadata = _modern_headers(message)
        try:
            await self._write.send(self._session_message(model, metadata=metadata))
        except (anyio.BrokenResourceError, anyio.ClosedResourceError) as exc:
            raise ChannelClosed from exc

    async def aclose(self) -> None:
        with contextlib.suppress(Exception):
            await self._write.aclose()


def _modern_headers(message: Message) -> Any:
    """Client side: a 2026-07-28 message (envelope in `params._meta`) goes out with its routing headers.

    The SDK transport then POSTs it statelessly; handshake-era messages carry no metadata, as before.
    """
    params = message.get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None
    version = meta.get("io.modelcontextprotocol/protocolVersion") if isinstance(meta, dict) else None
    if not isinstance(version, str) or not isinstance(message.get("method"), str):
        return None
    from mcp.shared.inbound import NAME_BEARING_METHODS, encode_header_value
    from mcp.shared.message import ClientMessageMetadata

    assert isinstance(params, dict)
    headers = {"mcp-protocol-version": version, "mcp-method": message["method"]}
    name = params.get(NAME_BEARING_METHODS.get(message["method"], ""))
    if isinstance(name, str):
        headers["mcp-name"] = encode_header_value(name)
    return ClientMessageMetadata(headers=headers)


@contextlib.asynccontextmanager
async def open_channel(
    *,
    url: str | None,
    argv: Sequence[str],
    headers: Mapping[str, str],
    timeout: float | None,
    oauth: Any = None,
    env: Mapping[str, str] | None = None,
    cwd: str | None = None,
) -> AsyncIterator[Channel]:
    """The channel to one backend: streamable HTTP to `url`, else the command `argv` spawned (a missing
    command is a clear BackendError), closed and reaped at the end. Every backend of every door is opened
    here."""
    if url is None:
        channel = ProcessChannel(spawn(argv, env, cwd))
        try:
            yield channel
        finally:
            await channel.aclose()
        return
    from mcp.client.streamable_http import streamable_http_client

    from ._oauth import backend_client

    try:
        async with (
            backend_client(url, headers, timeout, oauth) as client,
            streamable_http_client(url, http_client=client) as (read, write),
        ):
            yield SessionMessageChannel(read, write)
    except BaseExceptionGroup as group:
        # OAuth gave up mid-session (token revoked, refresh refused): the SDK transport's task group
        # carries our BackendError; unwrap it so it is reported like any backend failure.
        found = group.subgroup(lambda exc: isinstance(exc, BackendError))
        if found is None:
            raise
        raise first_leaf(found) from None


def open_backend(settings: Settings) -> contextlib.AbstractAsyncContextManager[Channel]:
    """The channel to the backend `settings` name: a spawned command or a URL."""
    url = settings.target[0] if settings.is_url else None
    return open_channel(
        url=url,
        argv=settings.target,
        headers=settings.headers,
        timeout=settings.timeout,
        oauth=settings.oauth,
    )
