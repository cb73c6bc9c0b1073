"""Message channels: one JSON-RPC peer each, carrying plain dicts.

The proxy relays raw JSON objects, not SDK models, so whatever it does not deliberately change reaches the
other side field for field (unknown fields, explicit nulls and future protocol versions included).
Transports differ only here: newline-delimited stdio (our own stdin/stdout, or a child process) and the
SDK's streamable-HTTP streams of `SessionMessage`, adapted to dicts at the edge.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import sys
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import anyio
import anyio.abc
from anyio.streams.buffered import BufferedByteReceiveStream

from .._errors import BackendError
from .._jsonbytes import dumps, loads

__all__ = [
    "Channel",
    "ChannelClosed",
    "Invalid",
    "Message",
    "ProcessChannel",
    "SessionMessageChannel",
    "StdioChannel",
    "http_backend",
    "open_process_channel",
    "parse",
    "scan_id",
    "valid_id",
    "with_id",
]

Message = dict[str, Any]
MAX_LINE = 1 << 31  # one message may be huge (a 50 MB result); the OS pipe, not us, is the limit
_OFFLOAD_BYTES = 1 << 20  # messages above ~1 MB are (de)serialised in a worker thread
_FINISH_LINE_SECONDS = 5.0
_RAW_BYTES = 256 * 1024  # results up to this size keep their line, forwarded as is when unchanged


@dataclass(frozen=True)
class Invalid:
    """A line that is not a JSON-RPC message; travels as a value so the relay can answer it."""

    error: str
    id: Any = None


class ChannelClosed(Exception):
    """The peer went away (EOF or broken pipe)."""


class Channel(Protocol):
    async def receive(self) -> Message | Invalid: ...

    async def send(self, message: Message, related_request_id: Any = None) -> None: ...

    async def aclose(self) -> None: ...


def valid_id(value: Any) -> bool:
    """A JSON-RPC id we can carry: a string or a number (never a bool, array, object or null)."""
    return isinstance(value, (str, int, float)) and not isinstance(value, bool)


def _id_or_none(value: Any) -> Any:
    return value if valid_id(value) else None


def parse(line: bytes) -> Message | Invalid:
    """Strictly parse one JSON-RPC line; never raises."""
    try:
        value = loads(line)
    except ValueError as exc:  # (orjson.JSONDecodeError and UnicodeDecodeError are ValueErrors)
        return Invalid(f"Parse error: {exc}", scan_id(line))
    if not isinstance(value, dict):
        return Invalid("Invalid Request: a JSON-RPC message must be a JSON object")
    request_id = _id_or_none(value.get("id"))
    if value.get("jsonrpc") != "2.0":
        return Invalid('Invalid Request: "jsonrpc" must be "2.0"', request_id)
    if "method" in value and not isinstance(value["method"], str):
        return Invalid('Invalid Request: "method" must be a string', request_id)
    if "method" not in value and "result" not in value and "error" not in value:
        return Invalid("Invalid Request: neither a request, a notification nor a response", request_id)
    if "id" in value and request_id is None and ("method" in value or value["id"] is not None):
        # null is allowed only in an error response that could not tell which request it answers
        return Invalid('Invalid Request: "id" must be a string or a number')
    return value


_TOKEN = re.compile(rb'"(?:[^"\\]|\\.)*"|[\[\]{},:]')
_SCALAR = re.compile(rb'\s*(-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|"(?:[^"\\]|\\.)*")\s*[,}]')


def scan_id(line: bytes) -> Any:
    """The top-level "id" of a line too broken (or too deep) to parse, when it can be told; else None.

    One pass of a regular expression over strings and brackets: no recursion, linear in the line, so a reply
    nested 100,000 deep can still be answered to the request it belongs to.
    """
    depth = 0
    expect_key = False
    for match in _TOKEN.finditer(line):
        token = match.group()
        if token in (b"{", b"["):
            if depth == 0 and token != b"{":
                return None
            depth += 1
            expect_key = depth == 1
        elif token in (b"}", b"]"):
            depth -= 1
            if depth <= 0:
                return None
        elif token == b",":
            expect_key = depth == 1
        elif token == b":":
            pass
        elif expect_key:
            expect_key = False
            if token == b'"id"':
                rest = line[match.end() :]
                colon = rest.lstrip()[:1]
                if colon != b":":
                    return None
                value = _SCALAR.match(rest, rest.index(b":") + 1)
                if value is None:
                    return None
                try:
                    return _id_or_none(json.loads(value.group(1)))
                except ValueError:
                    return None
        elif depth == 0:
            return None
    return None


class _Received(dict[str, Any]):
    """A message as parsed, with the line it came from: forwarded unchanged, it goes out byte for byte.

    An unchanged result (most are) then costs no serialisation at all. "Unchanged" is checked at send
    time: the same top-level values, by identity, so a message rebuilt or re-pointed (a new id, a shrunk
    result) is serialised as usual. Nested values are never edited in place on the relay's path.
    A new id (``with_id``) is spliced into the line only when the line is sent: a result the stages
    replace (a 200 KB one shrunk) never pays for locating and copying its id.
    """

    __slots__ = ("_id_from", "_line", "_values")

    def __init__(self, value: Message, line: bytes, id_from: Any = None) -> None:
        super().__init__(value)
        self._line = line
        self._values = tuple(map(id, value.values()))
        self._id_from = id_from  # (old id,) when the line still carries the old id's value

    def line_if_unchanged(self) -> bytes | None:
        if len(self) != len(self._values) or tuple(map(id, self.values())) != self._values:
            return None
        if self._id_from is None:
            return self._line
        span = _id_span(self._line, self._id_from[0])
        if span is None:  # the id cannot be located for certain in the line: re-serialised
            return None
        start, end = span
        return self._line[:start] + dumps(self["id"]) + self._line[end:]

    def with_id(self, new_id: Any) -> _Received | None:
        """This message answering ``new_id``, its line the same bytes but for the id's value (spliced
        when sent); None when the top-level id cannot be carried over (the caller re-serialises then)."""
        if self._id_from is not None or type(self.get("id")) is not int:
            return None
        return _Received({**self, "id": new_id}, self._line, (self["id"],))


# The top-level "id" of a compact response, where the SDKs put it: first (after "jsonrpc", Python's
# pydantic) or last (TypeScript's JSON.stringify of {result, jsonrpc, id}). Only integer ids: the relay
# gives the backend its own (1, 2, 3...), and a backend's answer carries one of them.
_HEAD_ID = re.compile(rb'\{\s*(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?"id"\s*:\s*(-?\d+)\s*[,}]')
_TAIL_ID = re.compile(rb',\s*"id"\s*:\s*(-?\d+)\s*\}$')
_EDGE = 64  # bytes at either end of the line the patterns look at


def _id_span(line: bytes, expected: Any) -> tuple[int, int] | None:
    """Where the value of the top-level "id" member (equal to ``expected``, an int) is in ``line``.

    The head pattern starts at the line's opening brace, so the member it finds is top-level; it is used
    only when no other ``"id"`` key can be in the line (a duplicate key later would win in parsers; the
    key could also be spelt with the escapes of "i" or "d"). The tail pattern ends at the closing brace,
    so its member is the top-level object's last: the one parsers keep. (Inside a JSON string a quote
    is escaped, so ``"id"`` there never matches.)"""
    if type(expected) is not int:
        return None
    head = _HEAD_ID.match(line, 0, _EDGE)
    if (
        head is not None
        and int(head.group(1)) == expected
        and line.count(b'"id"') == 1
        and b"\\u0069" not in line
        and b"\\u0064" not in line
    ):
        return head.span(1)
    offset = max(0, len(line) - _EDGE)
    tail = _TAIL_ID.search(line, offset)
    if tail is not None and int(tail.group(1)) == expected:
        return tail.span(1)
    return None


def with_id(message: Message, new_id: Any) -> Message:
    """``{**message, "id": new_id}``; a received result keeps its line (only the id's bytes change), so
    forwarded unchanged it is still not re-serialised."""
    if type(message) is _Received:
        spliced = message.with_id(new_id)
        if spliced is not None:
            return spliced
    return {**message, "id": new_id}


def _parse_line(line: bytes) -> Message | Invalid:
    """`parse`, keeping the line of a mid-size result so that it can be forwarded as is.

    Only results (the relay's stages build new dicts; nothing edits them in place), only up to
    `_RAW_BYTES` (bigger ones are shrunk anyway, and the line would double their memory), and only
    strict JSON, which `parse` alone accepts (no NaN or Infinity: no line needs searching for them).
    """
    message = parse(line)
    if type(message) is dict and len(line) <= _RAW_BYTES and "result" in message and "method" not in message:
        return _Received(message, line.strip())
    return message


def _line_of(message: Message) -> bytes:
    if type(message) is _Received:
        line = message.line_if_unchanged()
        if line is not None:
            return line + b"\n"
    return dumps(message) + b"\n"


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


class _LineChannel:
    """Newline-delimited JSON over a byte stream pair."""

    def __init__(self, receive: anyio.abc.ByteReceiveStream, send: anyio.abc.ByteSendStream) -> None:
        self._receive = BufferedByteReceiveStream(receive)
        self._send = send
        self._send_lock = anyio.Lock()

    async def receive(self) -> Message | Invalid:
        while True:
            try:
                line = await self._receive.receive_until(b"\n", MAX_LINE)
            except (anyio.EndOfStream, anyio.IncompleteRead, anyio.ClosedResourceError, OSError) as exc:
                raise ChannelClosed from exc
            if len(line) > _OFFLOAD_BYTES:  # parsing 50 MB takes ~100 ms: never on the event loop
                return await anyio.to_thread.run_sync(_parse_line, line)
            if line.strip():
                return _parse_line(line)

    async def send(self, message: Message, related_request_id: Any = None) -> None:
        if _looks_big(message):
            data = await anyio.to_thread.run_sync(_line_of, message)
        else:
            data = _line_of(message)
        async with self._send_lock:
            try:
                await self._send.send(data)
            except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError) as exc:
                raise ChannelClosed from exc

    async def aclose(self) -> None:
        with contextlib.suppress(Exception):
            await self._send.aclose()


class _FdReceive(anyio.abc.ByteReceiveStream):
    """Reads a raw file descriptor without blocking the event loop."""

    def __init__(self, fd: int) -> None:
        self._fd = fd
        os.set_blocking(fd, False)

    async def receive(self, max_bytes: int = 1 << 20) -> bytes:
        while True:
            try:
                data = os.read(self._fd, max_bytes)
            except BlockingIOError:
                await anyio.wait_readable(self._fd)
                continue
            if not data:
                raise anyio.EndOfStream
            return data

    async def aclose(self) -> None:
        pass


class _FdSend(anyio.abc.ByteSendStream):
    def __init__(self, fd: int) -> None:
        self._fd = fd
        os.set_blocking(fd, False)

    async def send(self, item: bytes) -> None:
        view = memoryview(item)
        while view:
            try:
                written = os.write(self._fd, view)
            except BlockingIOError:
                if len(view) == len(item):
                    await anyio.wait_writable(self._fd)  # nothing written yet: cancelling here is clean
                else:
                    await self._finish(view)
                    return
                continue
            except (BrokenPipeError, ConnectionResetError) as exc:
                raise anyio.BrokenResourceError from exc
            view = view[written:]

    async def _finish(self, view: memoryview) -> None:
        """Once part of a line is out, finish it even when cancelled (a cut line is invalid JSON), within
        a bound in case the reader has stopped reading."""
        with anyio.CancelScope(shield=True), anyio.move_on_after(_FINISH_LINE_SECONDS):
            while view:
                try:
                    view = view[os.write(self._fd, view) :]
                except BlockingIOError:
                    await anyio.wait_writable(self._fd)
                except (BrokenPipeError, ConnectionResetError) as exc:
                    raise anyio.BrokenResourceError from exc

    async def aclose(self) -> None:
        with contextlib.suppress(OSError):
            os.close(self._fd)


class StdioChannel(_LineChannel):
    """Our own stdin/stdout, claimed for the protocol.

    fd 1 is re-pointed at stderr so that a stray print (ours or a library's) cannot corrupt the JSON-RPC
    stream the agent reads.
    """

    def __init__(self) -> None:
        stdin = os.dup(0)
        stdout = os.dup(1)
        os.dup2(2, 1)
        sys.stdout = sys.stderr
        super().__init__(_FdReceive(stdin), _FdSend(stdout))


class ProcessChannel(_LineChannel):
    """A backend server spawned as a child, speaking over its stdin/stdout; its stderr stays ours."""

    def __init__(self, process: anyio.abc.Process, argv: Sequence[str]) -> None:
        assert process.stdout is not None and process.stdin is not None
        super().__init__(process.stdout, process.stdin)
        self.process = process
        self.argv = list(argv)

    def describe_exit(self) -> str:
        code = self.process.returncode
        if code is None:
            return "the backend closed its stdout"
        if code < 0:
            with contextlib.suppress(ValueError):
                return f"the backend was killed by {signal.Signals(-code).name}"
        return f"the backend exited with code {code}"

    async def aclose(self) -> None:
        await super().aclose()
        with anyio.CancelScope(shield=True):
            with anyio.move_on_after(2):
                await self.process.wait()
                return
            with contextlib.suppress(ProcessLookupError):
                self.process.terminate()
            with anyio.move_on_after(2):
                await self.process.wait()
                return
            with contextlib.suppress(ProcessLookupError):
                self.process.kill()
            await self.process.wait()


_PIPE_SIZE = 1 << 20  # Linux's default pipe-max-size for unprivileged processes


def _widen(fd: int) -> None:
    """The backend's stdout as a 1 MiB pipe: through the default 64 KiB one, a 200 KB answer takes four
    rounds of the backend blocking and this process waking to read (~0.6 ms); through 1 MiB, one."""
    with contextlib.suppress(AttributeError, OSError):  # (not Linux, or the size refused: as before)
        import fcntl

        fcntl.fcntl(fd, fcntl.F_SETPIPE_SZ, _PIPE_SIZE)


class _AdoptedProcess:
    """A backend spawned before the event loop ran (`_prestart`), with the parts of `anyio.abc.Process`
    that `ProcessChannel` uses."""

    def __init__(self, popen: subprocess.Popen[bytes]) -> None:
        assert popen.stdin is not None and popen.stdout is not None
        self._popen = popen
        self.pid = popen.pid
        self.stdin = _FdSend(os.dup(popen.stdin.fileno()))
        self.stdout = _FdReceive(os.dup(popen.stdout.fileno()))
        _widen(popen.stdout.fileno())
        popen.stdin.close()
        popen.stdout.close()

    @property
    def returncode(self) -> int | None:
        return self._popen.poll()

    async def wait(self) -> int:
        while (code := self._popen.poll()) is None:  # only at shutdown or failure: polling is enough
            await anyio.sleep(0.01)
        return code

    def terminate(self) -> None:
        self._popen.terminate()

    def kill(self) -> None:
        self._popen.kill()


async def open_process_channel(
    argv: Sequence[str], env: Mapping[str, str] | None = None, cwd: str | None = None
) -> ProcessChannel:
    """Spawn the backend (or adopt the one `_prestart` spawned); a missing command is a clear BackendError."""
    if env is None and cwd is None:
        from .._prestart import take

        early = take(argv)
        if early is not None:
            return ProcessChannel(_AdoptedProcess(early), argv)  # type: ignore[arg-type]
    try:
        process = await anyio.open_process(
            list(argv),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=None,
            env={**os.environ, **env} if env else None,
            cwd=cwd,
            start_new_session=True,
        )
    except FileNotFoundError as exc:
        raise BackendError(
            f"cannot start the backend: command {argv[0]!r} was not found; check the command after '--' "
            "and that it is on PATH"
        ) from exc
    except PermissionError as exc:
        raise BackendError(
            f"cannot start the backend: {argv[0]!r} is not executable ({exc.strerror})"
        ) from exc
    except OSError as exc:
        raise BackendError(f"cannot start the backend {argv[0]!r}: {exc}") from exc
    return ProcessChannel(process, argv)


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
async def http_backend(
    url: str, headers: Mapping[str, str], timeout: float | None, oauth: Any = None
) -> AsyncIterator[Channel]:
    """Connect to a streamable-HTTP backend."""
    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    from ..oauth import backend_auth

    http_timeout = httpx2.Timeout(30.0, read=timeout if timeout else 300.0)
    auth = backend_auth(url, headers, oauth)  # OAuth with stored tokens, unless -H gives Authorization
    try:
        async with (
            httpx2.AsyncClient(
                headers=dict(headers), timeout=http_timeout, follow_redirects=False, auth=auth
            ) as client,
            streamable_http_client(url, http_client=client) as (read, write),
        ):
            yield SessionMessageChannel(read, write)
    except BaseExceptionGroup as group:
        # OAuth gave up mid-session (token revoked, refresh refused): the SDK transport's task group
        # carries our BackendError; unwrap it so it is reported like any backend failure.
        found = group.subgroup(lambda exc: isinstance(exc, BackendError))
        if found is None:
            raise
        leaf: BaseException = found
        while isinstance(leaf, BaseExceptionGroup):
            leaf = leaf.exceptions[0]
        raise leaf from None
