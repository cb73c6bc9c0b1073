"""The doors in the test process: the real sessions, their peers on in-memory pipes or loopback sockets.

A test runs a door here when it is about what the session does with messages (shrinking, recovery,
policies, listings, refusals); what is about the process (start-up, exit codes, signals, its stderr, a
backend that dies, file descriptors) stays spawned, and every door keeps an end-to-end test through the
spawned CLI. A spawned wrap of the demo server costs ~1.5 s of CPU (the wrap, the SDK-importing demo
server); in process it costs a few milliseconds.

- `MemoryWrap(ARGS, target=...)` is `RawClient(cli("wrap", *ARGS, "--", *TARGET))` (the demo server by
  default) without the processes: ARGS go through the CLI's own parser (flags, `MCPSQUEEZE_*` variables,
  the config file) and `run_wrap(settings, ends)` runs the same session (services, pipeline, relay,
  sweep, summary) with the agent's channel on in-memory pipes (`transports/_memory_pipes.py`: the line channel
  stdio uses, so framing and strict parsing are the same).
- `HttpWrap(ARGS, TARGET)` is `wrap --transport streamable-http --port 0 ARGS -- TARGET`: the real HTTP
  frontend (uvicorn in a thread) on a loopback port, `url`; `HttpClient(url)` speaks to it (or to any
  streamable HTTP server) with the RawClient surface. `Serve(ARGS)` is `mcpsqueeze serve ARGS`: the
  session API on its Unix socket or loopback port, `where`. Both stop as SIGTERM would (`until`).
- `open_wrap(TRANSPORT, ARGS)` is either of them as a RawClient (conftest's `wrap_door` runs a test over
  each); `wrap_transport(ARGS)` is an SDK client transport to a wrap run on the caller's loop.
- `MemoryServer(ARGV)` is a RawClient straight to a server that can run here: the server's own answers.
- `mcpsq(ARGV, env)` is the shim's command, `run_cli(*ARGS)` a one-shot `mcpsqueeze` command (config, stats,
  install-commands, ...): exit code, stdout and stderr, as `subprocess.run` gives them.
  `generated_modules(DIR)` imports Code Mode's generated Python as an agent's script does.

`in_memory_parts()`: a backend command that can run here (`in_process_server`: the demo server, the
MCPServer fixtures, and the hand-written backends of tests/fixtures on a worker thread) is a fresh copy of
its module on in-memory pipes (the same bytes a spawned one writes), wherever a door opens it
(`backends_opened` counts the opens). On for the whole run (tests/conftest.py) but for what a test marked
`real_processes` sets aside. `demo_http()` serves a demo server over streamable HTTP in a thread.

The session's log records (warnings, `--log-level info` call lines, the exit summary) are kept in
`stderr`, formatted as the CLI prints them.
"""

from __future__ import annotations

import collections
import contextlib
import dataclasses
import importlib.util
import io
import logging
import math
import os
import queue
import re
import socket
import sys
import threading
import time
import types
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
from anyio.from_thread import run as run_from_thread
from anyio.from_thread import start_blocking_portal
from anyio.streams.buffered import BufferedByteReceiveStream

from mcpsqueeze._logging import _Prefixed
from mcpsqueeze.proxy import run_wrap
from mcpsqueeze.serve import run_serve
from mcpsqueeze.settings import Settings
from mcpsqueeze.transports import open_backend
from mcpsqueeze.transports._memory_pipes import (
    MemoryByteReceive,
    MemoryByteSend,
    memory_line_channel,
    memory_pipe,
)
from rawclient import HTTP_ACCEPT, RawClient, demo_server

__all__ = [
    "WRAP_TRANSPORTS",
    "Completed",
    "HttpClient",
    "HttpWrap",
    "MemoryServer",
    "MemoryWrap",
    "Serve",
    "asgi_on_loopback",
    "backends_opened",
    "demo_channel",
    "demo_http",
    "generated_modules",
    "in_memory_parts",
    "in_process_server",
    "mcpsq",
    "open_wrap",
    "real_processes",
    "run_cli",
    "serve_arguments",
    "wrap_settings",
    "wrap_transport",
]


def wrap_settings(args: Sequence[str]) -> Settings:
    """The Settings `mcpsqueeze wrap ARGS` would run with, parsed by the CLI's own command."""
    from mcpsqueeze.cli._config import read_config
    from mcpsqueeze.cli._main import _settings, wrap

    ctx = wrap.make_context("wrap", list(args))
    with ctx:
        opts = dict(ctx.params)
        target = list(opts.pop("target"))
        return _settings(target, opts, read_config(opts["config"]), "wrap")


def serve_arguments(args: Sequence[str]) -> tuple[Any, ...]:
    """What `mcpsqueeze serve ARGS` would call `run_serve` with, from the CLI's own command."""
    from unittest import mock

    from mcpsqueeze.cli import _main

    called: list[tuple[Any, ...]] = []

    def run(function: Any, *arguments: Any) -> int:
        called.append(arguments)
        return 0

    with (
        mock.patch.object(_main, "_run", run),
        mock.patch.object(_main, "_configure_logging", lambda level: None),  # the process's own stderr
        contextlib.suppress(SystemExit),
    ):
        _main.serve.main(list(args), prog_name="mcpsqueeze serve", standalone_mode=False)
    assert len(called) == 1, f"serve {list(args)} did not start"
    return called[0]


class _NoExit(types.ModuleType):
    """`os` for the in-process demo server, whose `crash` tool would end the test process."""

    def __getattr__(self, name: str) -> Any:
        return getattr(os, name)

    @staticmethod
    def _exit(code: int) -> None:
        raise RuntimeError("the in-process demo server cannot crash; spawn one (rawclient.demo_server)")


def fresh_demo() -> types.ModuleType:
    """A new copy of `mcpsqueeze.demo.server` (its own MCPServer and per-process state)."""
    spec = importlib.util.find_spec("mcpsqueeze.demo.server")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.os = _NoExit("os")  # type: ignore[attr-defined]
    return module


class _LinesIn:
    """What the SDK's stdio transport iterates for stdin: text lines from an in-memory pipe."""

    def __init__(self, receive: MemoryByteReceive) -> None:
        self._buffered = BufferedByteReceiveStream(receive)

    def __aiter__(self) -> _LinesIn:
        return self

    async def __anext__(self) -> str:
        try:
            line = await self._buffered.receive_until(b"\n", 1 << 31)
        except (anyio.EndOfStream, anyio.IncompleteRead):
            raise StopAsyncIteration from None
        return line.decode("utf-8", "replace") + "\n"


class _TextOut:
    """What the SDK's stdio transport writes for stdout."""

    def __init__(self, send: MemoryByteSend) -> None:
        self._send = send

    async def write(self, text: str) -> None:
        await self._send.send(text.encode("utf-8"))

    async def flush(self) -> None:
        pass


FIXTURES = Path(__file__).resolve().parent / "fixtures"


def _fresh_module(path: Path) -> types.ModuleType:
    """A new copy of the module at `path` (its own globals), as its own process would have it."""
    spec = importlib.util.spec_from_file_location(f"in_process_{path.stem}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def fresh_fixture(name: str) -> Any:
    """A new copy of tests/fixtures/NAME.py's MCPServer (`server`), as its own process would run it."""
    return _fresh_module(FIXTURES / f"{name}.py").server


#: A server run on in-memory pipes: it reads the first, writes the second, and ends when its input does.
Peer = Callable[[MemoryByteReceive, MemoryByteSend], Awaitable[None]]
MCPSERVERS = ("records_server", "mcp_squeeze_server", "ledger_server", "structured_server")
# The hand-written backends (fixtures/stdio_backend.py's `main(argv)`) that may run here: all but
# hung_backend, whose process is what its tests look at (it ignores SIGTERM and EOF).
SCRIPTED = (
    "noisy_backend", "changing_backend", "notifying_backend", "pages_backend", "raw_tools_backend",
    "hostile_backend", "unparseable_server", "big_backend",
)  # fmt: skip


def in_process_server(argv: Sequence[str]) -> Peer | None:
    """The server a backend command would run, run here instead, when it can: the demo server, the
    MCPServer fixtures and the hand-written backends of tests/fixtures (SCRIPTED); None otherwise."""
    argv = list(argv)
    if argv == demo_server():
        return lambda receive, send: serve_stdio(fresh_demo().mcp, receive, send)
    if len(argv) < 2 or argv[0] != sys.executable:
        return None
    path = Path(argv[1]).resolve()
    if path.parent != FIXTURES:
        return None
    if path.stem in MCPSERVERS and len(argv) == 2:
        return lambda receive, send: serve_stdio(fresh_fixture(path.stem), receive, send)
    if path.stem in SCRIPTED:
        return lambda receive, send: serve_script(path, argv[2:], receive, send)
    return None


async def serve_stdio(mcp_server: Any, receive: MemoryByteReceive, send: MemoryByteSend) -> None:
    """An MCPServer's `run("stdio")`, on in-memory pipes, until its input ends."""
    from mcp.server.stdio import stdio_server

    server = mcp_server._lowlevel_server
    try:
        async with stdio_server(stdin=_LinesIn(receive), stdout=_TextOut(send)) as (read, write):  # type: ignore[arg-type]
            await server.run(read, write, server.create_initialization_options())
    finally:
        await send.aclose()


class _ScriptOut:
    """A hand-written backend's stdout: what it flushes goes down the in-memory pipe, from its thread."""

    def __init__(self, send: MemoryByteSend) -> None:
        self._send = send
        self._pending: list[str] = []

    def write(self, text: str) -> None:
        self._pending.append(text)

    def flush(self) -> None:
        data, self._pending = "".join(self._pending).encode(), []
        run_from_thread(self._send.send, data)


async def serve_script(path: Path, argv: list[str], receive: MemoryByteReceive, send: MemoryByteSend) -> None:
    """`python PATH ARGV` (a hand-written backend: its `main(argv)`), a fresh copy, on a worker thread
    reading and writing in-memory pipes, until its input ends."""
    from fixtures.stdio_backend import run_with

    module = _fresh_module(path)
    inbox: queue.Queue[str | None] = queue.Queue()

    async def pump() -> None:
        lines = _LinesIn(receive)
        try:
            async for line in lines:
                inbox.put(line)
        finally:
            inbox.put(None)

    def run() -> None:
        with contextlib.suppress(SystemExit):  # a backend that exits: its output ends
            run_with(iter(inbox.get, None), _ScriptOut(send), module.main, argv)

    async with anyio.create_task_group() as tg:
        tg.start_soon(pump)
        try:
            await anyio.to_thread.run_sync(run, abandon_on_cancel=True)
        finally:
            await send.aclose()
            tg.cancel_scope.cancel()


@contextlib.asynccontextmanager
async def demo_channel(peer: Peer | None = None) -> AsyncIterator[Any]:
    """A JSON-RPC channel to a fresh in-process demo server (or to `peer`), closed (its input ended) on
    exit."""
    to_back, back_in = memory_pipe()
    back_out, from_back = memory_pipe()
    async with anyio.create_task_group() as tg:
        tg.start_soon(peer or in_process_server(demo_server()), back_in, back_out)  # type: ignore[arg-type]
        channel = memory_line_channel(from_back, to_back)
        try:
            yield channel
        finally:
            await channel.aclose()  # the server's input ends, as a spawned one's stdin closes
            tg.cancel_scope.deadline = anyio.current_time() + 5  # then it has 5 s to finish


# Which stand-ins are on (`real_processes` sets parts aside): "backends".
_standing_in: set[str] = set()
_opened: collections.Counter[tuple[str, ...]] = collections.Counter()


def backends_opened(argv: Sequence[str]) -> int:
    """How many times a door in this process has opened (spawned, or run here) the backend `argv`."""
    return _opened[tuple(argv)]


@contextlib.contextmanager
def in_memory_parts() -> Iterator[None]:
    """While open, the parts a door running in this process would spawn run here instead.

    Backends: one whose command `in_process_server` knows (the demo server, the MCPServer fixtures) is a
    fresh in-process copy on in-memory pipes (`demo_channel`) instead of a process; other backends are
    spawned as usual. The seam is `open_channel`, where every backend of every door is opened (wrap's
    stdio and HTTP sessions, serve, `Client`)."""
    from mcpsqueeze.transports import _channels

    spawn = _channels.open_channel

    @contextlib.asynccontextmanager
    async def open_channel(*, url: str | None, argv: Sequence[str], **kw: Any) -> AsyncIterator[Any]:
        _opened[tuple(argv) if url is None else (url,)] += 1
        here = "backends" in _standing_in and url is None and not kw.get("env") and not kw.get("cwd")
        peer = in_process_server(argv) if here else None
        if peer is None:
            async with spawn(url=url, argv=argv, **kw) as channel:
                yield channel
            return
        async with demo_channel(peer) as channel:
            yield channel

    _channels.open_channel = open_channel  # type: ignore[assignment]
    _standing_in.add("backends")
    try:
        yield
    finally:
        _standing_in.clear()
        _channels.open_channel = spawn


@contextlib.contextmanager
def real_processes(*parts: str) -> Iterator[None]:
    """While open, `in_memory_parts` stands aside for `parts` ("backends" when none is named): doors in
    this process spawn their backends, as the CLI does."""
    aside = set(parts or ("backends",)) & _standing_in
    _standing_in.difference_update(aside)
    try:
        yield
    finally:
        _standing_in.update(aside)


class _Records(logging.Handler):
    def __init__(self, lines: list[str]) -> None:
        super().__init__()
        self.lines = lines
        self.setFormatter(_Prefixed("%(message)s"))

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(self.format(record) + "\n")


class _InMemory(RawClient):
    """The RawClient surface (but `proc`) over in-memory pipes to a peer run on a portal in this process:
    `_begin(peer)` starts `peer(receive, send)`, whose result is the exit code `close` returns."""

    exit_code: int | None = None

    def _begin(self, peer: Callable[[MemoryByteReceive, MemoryByteSend], Any]) -> None:
        self._stack = contextlib.ExitStack()
        self._portal = self._stack.enter_context(start_blocking_portal("asyncio"))
        self._to_peer, peer_in = memory_pipe()
        peer_out, from_peer = memory_pipe()
        self._out: queue.Queue[bytes | None] = queue.Queue()

        async def run() -> int:
            try:
                return await peer(peer_in, peer_out)
            finally:
                await peer_out.aclose()  # the process would exit: the client reads the end of its output

        self._session = self._portal.start_task_soon(run)
        self._portal.start_task_soon(self._pump, from_peer)
        threading.Thread(target=self._read, daemon=True).start()

    async def _pump(self, from_peer: MemoryByteReceive) -> None:
        pending = b""
        try:
            while True:
                pending += await from_peer.receive()
                *lines, pending = pending.split(b"\n")
                for line in lines:
                    self._out.put(line + b"\n")
        except anyio.EndOfStream:
            pass
        finally:
            self._out.put(None)

    def _read(self) -> None:
        while (line := self._out.get()) is not None:
            self._received(line)
        self._ended()

    def send(self, message: dict[str, Any] | bytes) -> None:
        import json

        data = message if isinstance(message, bytes) else json.dumps(message).encode()
        self._portal.call(self._to_peer.send, data + b"\n")

    def close(self, timeout: float = 20.0) -> int:
        """Close the peer's input like a client leaving; return its exit code."""
        if self.exit_code is None:
            try:
                self._portal.call(self._to_peer.aclose)
                self.exit_code = self._session.result(timeout)
            finally:
                self._stack.close()
        return self.exit_code

    def __exit__(self, *exc: object) -> None:
        self.close()


class MemoryServer(_InMemory):
    """A RawClient straight to a server that can run here (`in_process_server`: the demo server by
    default, the MCPServer fixtures), over in-memory pipes: the server's own answers, without a proxy."""

    def __init__(self, argv: Sequence[str] | None = None) -> None:
        server = in_process_server(argv or demo_server())
        assert server is not None, f"{argv} cannot run in this process"
        self._start(None)

        async def peer(receive: MemoryByteReceive, send: MemoryByteSend) -> int:
            await server(receive, send)
            return 0

        self._begin(peer)


class MemoryWrap(_InMemory):
    """`mcpsqueeze wrap ARGS -- TARGET` (the demo server by default), in this process; the RawClient
    surface but `proc`. Its backend is opened as wrap opens it: on in-memory pipes when it can run here
    (`in_memory_parts`, on in the tests), else spawned."""

    def __init__(
        self,
        args: Sequence[str],
        *,
        target: Sequence[str] | None = None,
        on_request: Callable[[dict[str, Any]], dict[str, Any]] | None = None,
    ) -> None:
        self._start(on_request)
        self.settings = wrap_settings([*args, "--", *(target or demo_server())])
        self._log_to_stderr()

        async def peer(receive: MemoryByteReceive, send: MemoryByteSend) -> int:
            @contextlib.asynccontextmanager
            async def ends(settings: Settings) -> AsyncIterator[tuple[Any, Any]]:
                async with open_backend(settings) as back:
                    yield memory_line_channel(receive, send), back

            return await run_wrap(self.settings, ends)

        self._begin(peer)

    def _log_to_stderr(self) -> None:
        """The session's log records, as the CLI would print them on its stderr (kept until `close`)."""
        self._logs = _logs_into(self.stderr_lines, self.settings.log_level)

    def close(self, timeout: float = 20.0) -> int:
        try:
            return super().close(timeout)
        finally:
            self._logs.close()


def _logs_into(lines: list[str], level: str) -> contextlib.ExitStack:
    """The `mcpsqueeze` log records at `level` appended to `lines` until the returned stack closes."""
    stack = contextlib.ExitStack()
    handler = _Records(lines)
    logger = logging.getLogger("mcpsqueeze")
    stack.callback(logger.setLevel, logger.level)
    stack.callback(logger.removeHandler, handler)
    logger.addHandler(handler)
    logger.setLevel(level.upper())
    return stack


class _Served:
    """A door's server run in this process until `stop()`: log records as its stderr."""

    ready: str  # the pattern of the log line saying it serves; group 1 is where

    def _serve(self, level: str, start: Callable[[Any], Any], timeout: float) -> str:
        self.stderr_lines: list[str] = []
        self.exit_code: int | None = None
        self._stack = contextlib.ExitStack()
        self._stack.enter_context(_logs_into(self.stderr_lines, level))
        self._portal = self._stack.enter_context(start_blocking_portal("asyncio"))
        self._stop: anyio.Event = self._portal.call(anyio.Event)

        async def until(stop: Callable[[], None]) -> None:
            await self._stop.wait()
            stop()

        self._session = self._portal.start_task_soon(start, until)
        deadline = time.monotonic() + timeout
        while (found := re.search(self.ready, self.stderr)) is None:
            if self._session.done():
                self._session.result()  # its error
                self._stack.close()
                raise AssertionError(f"it ended before serving:\n{self.stderr}")
            if time.monotonic() > deadline:
                self.stop()
                raise TimeoutError(f"it did not serve within {timeout} s:\n{self.stderr}")
            time.sleep(0.01)
        return found.group(1)

    @property
    def stderr(self) -> str:
        return "".join(self.stderr_lines)

    def poll(self) -> int | None:
        """None while serving (as `Popen.poll`), else the exit code."""
        return None if not self._session.done() else self._session.result()

    def stop(self, timeout: float = 30.0) -> int:
        """End it as SIGTERM would; its exit code."""
        if self.exit_code is None:
            try:
                self._portal.call(self._stop.set)
                self.exit_code = self._session.result(timeout)
            finally:
                self._stack.close()
        return self.exit_code

    def __enter__(self) -> Any:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


class Serve(_Served):
    """`mcpsqueeze serve ARGS`, in this process; `where` is its socket path or base URL."""

    ready = r"session ready on (\S+?);"

    def __init__(self, args: Sequence[str], *, timeout: float = 30.0) -> None:
        arguments = serve_arguments(args)
        self.settings = arguments[0]
        self.where = self._serve(self.settings.log_level, lambda until: run_serve(*arguments, until), timeout)


class HttpWrap(_Served):
    """`mcpsqueeze wrap --transport streamable-http --port 0 ARGS -- TARGET`, in this process; `url`."""

    ready = r"(http://127\.0\.0\.1:\d+/mcp)"

    def __init__(self, args: Sequence[str], target: Sequence[str], timeout: float = 30.0) -> None:
        self.settings = wrap_settings(["--transport", "streamable-http", "--port", "0", *args, "--", *target])
        settings = self.settings
        self.url = self._serve(settings.log_level, lambda until: run_wrap(settings, None, until), timeout)


# -- one-shot commands ---------------------------------------------------------------------------------


@dataclasses.dataclass
class Completed:
    """What a finished command left: `subprocess.run(..., capture_output=True)`'s fields, as text
    (`stdout`, `stderr`) and as the bytes written (`out`, `err`)."""

    returncode: int
    out: bytes
    err: bytes

    @property
    def stdout(self) -> str:
        return self.out.decode("utf-8", "replace")

    @property
    def stderr(self) -> str:
        return self.err.decode("utf-8", "replace")


class _Stream:
    """A stream with a `buffer`, as `sys.stdout` has: what the shim writes its bytes to."""

    def __init__(self) -> None:
        self.buffer = io.BytesIO()


def mcpsq(
    argv: Sequence[str], env: Mapping[str, str], stdin: str = "", *, prefix: str = "mcpsq "
) -> Completed:
    """`mcpsq ARGV` with the environment `env` and `stdin`, in this process: the shim's own `run` (everything
    it does but printing) and its own byte writer, so stdout and stderr are the bytes the command prints
    into a pipe. The shim's process (its start-up, its imports, a terminal) is tested spawned
    (tests/bash/test_shim.py)."""
    from mcpsqueeze.bash import shim

    outcome = shim.run(list(argv), env, prefix=prefix, read_stdin=lambda: stdin)
    out, err = _Stream(), _Stream()
    shim._write(out, outcome.stdout)
    shim._write(err, outcome.stderr)
    return Completed(outcome.code, out.buffer.getvalue(), err.buffer.getvalue())


def run_cli(*args: str, env: Mapping[str, str | None] | None = None, stdin: str | None = None) -> Completed:
    """`mcpsqueeze ARGS` for a command that ends by itself (config, stats, install-commands, clean, health,
    auth, and wrap or serve refusing to start), in this process: the CLI's own click command, its exit
    code, stdout and stderr. `env` is added to this process's environment while it runs (a None value
    unsets the variable). A wrap that does start fails the test: it would take this process's stdio."""
    from unittest import mock

    from click.testing import CliRunner

    from mcpsqueeze.cli._main import main
    from mcpsqueeze.transports import _channels

    def not_here(*args: object, **kwargs: object) -> None:
        raise AssertionError("a wrap started in the test process would take its stdio: use MemoryWrap")

    with mock.patch.object(_channels.StdioChannel, "__init__", not_here):
        result = CliRunner().invoke(
            main, list(args), env=dict(env or {}), input=stdin, catch_exceptions=False
        )
    return Completed(result.exit_code, result.stdout_bytes, result.stderr_bytes)


@contextlib.contextmanager
def generated_modules(directory: Path) -> Iterator[Callable[[str], types.ModuleType]]:
    """Code Mode's generated Python modules in `directory` (`install-commands --lang python`), imported in
    this process as an agent's script imports them (the directory on `sys.path`), forgotten afterwards.
    That they need nothing but the standard library (`python -I -S`) is tested in a fresh interpreter
    (tests/codemode/test_code_mode.py)."""
    where = str(directory)
    sys.path.insert(0, where)
    try:
        yield importlib.import_module
    finally:
        sys.path.remove(where)
        for name, module in list(sys.modules.items()):
            if (getattr(module, "__file__", None) or "").startswith(where):
                del sys.modules[name]


# -- streamable HTTP ------------------------------------------------------------------------------------


@contextlib.contextmanager
def asgi_on_loopback(app: Any, sock: socket.socket | None = None) -> Iterator[str]:
    """An ASGI app served by uvicorn in a thread of this process, on a loopback port (or the bound `sock`,
    for an app that must know its port first): its base URL."""
    import uvicorn

    if sock is None:
        sock = socket.socket()
        sock.bind(("127.0.0.1", 0))
    port = int(sock.getsockname()[1])

    class Server(uvicorn.Server):
        @contextlib.contextmanager
        def capture_signals(self) -> Iterator[None]:  # the test process's signals stay its own
            yield

    server = Server(uvicorn.Config(app, log_level="warning"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + 30
        while not server.started:
            assert thread.is_alive() and time.monotonic() < deadline, "the server did not start"
            time.sleep(0.01)
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(15)
        sock.close()


@contextlib.contextmanager
def demo_http() -> Iterator[str]:
    """A fresh demo server over streamable HTTP, in a thread of this process: its /mcp URL."""
    with asgi_on_loopback(fresh_demo().mcp.streamable_http_app(host="127.0.0.1")) as base:
        yield f"{base}/mcp"


class HttpClient(RawClient):
    """The RawClient surface over streamable HTTP (2025-11-25, one session): each message is POSTed; what
    the answer carries (JSON, or the events of an SSE stream) is read as a stdio client reads lines."""

    def __init__(self, url: str, headers: Mapping[str, str] | None = None) -> None:
        import httpx2

        self._start(None)
        self.url = url
        self._headers = {**HTTP_ACCEPT, **(headers or {})}
        self._http = httpx2.Client(timeout=60)
        self.exit_code: int | None = None

    def send(self, message: dict[str, Any] | bytes) -> None:
        import json

        body = message if isinstance(message, bytes) else json.dumps(message).encode()
        answer = self._http.post(
            self.url, content=body, headers={**self._headers, "content-type": "application/json"}
        )
        if "mcp-session-id" in answer.headers:
            self._headers["mcp-session-id"] = answer.headers["mcp-session-id"]
        if answer.status_code == 202:
            return
        if answer.headers.get("content-type", "").startswith("text/event-stream"):
            for event in answer.text.split("\n\n"):
                data = "\n".join(line[5:].lstrip() for line in event.splitlines() if line.startswith("data:"))
                if data:
                    self._received(data.encode())
            return
        self._received(answer.content)

    def close(self, timeout: float = 20.0) -> int:
        """End the session (DELETE) like a client leaving."""
        if self.exit_code is None:
            self.exit_code = 0
            if "mcp-session-id" in self._headers:
                self._http.delete(self.url, headers=self._headers)
            self._http.close()
        return self.exit_code

    def __exit__(self, *exc: object) -> None:
        self.close()


@contextlib.asynccontextmanager
async def wrap_transport(args: Sequence[str], target: Sequence[str] | None = None) -> AsyncIterator[Any]:
    """An SDK client transport (`mcp.Client(wrap_transport(ARGS))`) to `wrap ARGS -- TARGET` run on the
    caller's event loop, its stdio on in-memory pipes: what `StdioServerParameters` gives a client of a
    spawned wrap, framed and parsed as the SDK's stdio client does."""
    from mcp.client.stdio import _parse_line

    settings = wrap_settings([*args, "--", *(target or demo_server())])
    to_wrap, wrap_in = memory_pipe()
    wrap_out, from_wrap = memory_pipe()
    read_send, read_receive = anyio.create_memory_object_stream[Any](math.inf)
    write_send, write_receive = anyio.create_memory_object_stream[Any](math.inf)

    @contextlib.asynccontextmanager
    async def ends(settings: Settings) -> AsyncIterator[tuple[Any, Any]]:
        async with open_backend(settings) as back:
            yield memory_line_channel(wrap_in, wrap_out), back

    async def run() -> None:
        try:
            await run_wrap(settings, ends)
        finally:
            await wrap_out.aclose()

    async def read() -> None:
        async with read_send:
            async for line in _LinesIn(from_wrap):
                await read_send.send(_parse_line(line.rstrip("\n")))

    async def write() -> None:
        async with write_receive:
            async for message in write_receive:
                data = message.message.model_dump_json(by_alias=True, exclude_unset=True)
                await to_wrap.send((data + "\n").encode())
        await to_wrap.aclose()  # the client left: wrap's input ends

    async with anyio.create_task_group() as tg:
        for task in (run, read, write):
            tg.start_soon(task)
        yield read_receive, write_send
        await write_send.aclose()


WRAP_TRANSPORTS = ("stdio", "streamable-http")


@contextlib.contextmanager
def open_wrap(
    transport: str, args: Sequence[str], target: Sequence[str] | None = None
) -> Iterator[RawClient]:
    """`wrap ARGS -- TARGET` (the demo server by default) in this process, reached over `transport` (one of
    WRAP_TRANSPORTS): over in-memory pipes (`MemoryWrap`) or one streamable HTTP session on loopback
    (`HttpWrap` and `HttpClient`). The conftest fixture `wrap_door` runs a test over each."""
    if transport == "stdio":
        with MemoryWrap(args, target=target) as client:
            yield client
        return
    with HttpWrap(args, target or demo_server()) as served, HttpClient(served.url) as client:
        yield client
