"""`mcpsqueeze wrap` in the test process: the real stdio session over in-memory pipes.

`MemoryWrap(ARGS)` is `RawClient(cli("wrap", *ARGS, "--", *demo_server()))` without the two processes: the
wrap options go through the CLI's own parser (flags, `MCPSQUEEZE_*` variables, the config file), and
`run_wrap(settings, ends)` runs the same session (services, pipeline, relay, retention sweep, summary) with
the agent's and the backend's channels on in-memory pipes (`transports/_memory_pipes.py`: the line channel stdio
uses, so framing and strict parsing are the same). The backend is the bundled demo server, a fresh copy
of its module per session (its per-process state starts clean, as a new process would), served by the
SDK's own stdio transport over those pipes: the same bytes a spawned one writes.

Why: a spawned wrap of the demo server costs ~1.5 s of CPU (the wrap, the SDK-importing demo server, the
token counter helper); this costs a few milliseconds, so tests of what the session does with results
(shrinking, recovery, policies, compressed listings) need not pay for the process boundary. Each feature
keeps at least one test through the spawned CLI; what is about the process itself (start-up, exit codes,
signals, stderr of the process, a backend that dies) stays spawned.

`demo_channel()` is the channel to the demo server a backend command would give, in this process: the
conftest fixture `demo_backends_in_memory` hands it to the library doors (`Client`) for the demo server.

`Serve(ARGS)` is `mcpsqueeze serve ARGS` in this process (the CLI's own command parses ARGS; the session API
on its Unix socket or loopback port, in a thread), for the shim processes and HTTP calls of a test.

`HttpWrap(ARGS, TARGET)` is `wrap --transport streamable-http --port 0 ARGS -- TARGET` in this process: the
real HTTP frontend (uvicorn on a loopback port, in a thread), reached over real sockets at `url`; its
backends are spawned per session as usual. `stop()` ends it as SIGTERM would (`run_wrap`'s `until`).

The session's log records (warnings, `--log-level info` call lines, the exit summary) are kept in
`stderr`, formatted as the CLI prints them. While a session runs, token counting is done in this process
(as the `counting_in_process` fixture does: the same exact figures, no helper process per session).
"""

from __future__ import annotations

import contextlib
import importlib.util
import logging
import os
import queue
import re
import sys
import threading
import time
import types
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import anyio
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
from rawclient import RawClient, demo_server

__all__ = [
    "HttpWrap",
    "MemoryWrap",
    "Serve",
    "demo_channel",
    "serve_arguments",
    "serve_demo",
    "wrap_settings",
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


def fresh_fixture(name: str) -> Any:
    """A new copy of tests/fixtures/NAME.py's MCPServer (`server`), as its own process would run it."""
    spec = importlib.util.spec_from_file_location(f"in_process_{name}", FIXTURES / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.server


def in_process_server(argv: Sequence[str]) -> Callable[[], Any] | None:
    """How to make the server a backend command would run, when it can run here: the demo server and
    the MCPServer fixtures (records, seed, structured); None for anything else."""
    argv = list(argv)
    if argv == demo_server():
        return lambda: fresh_demo().mcp
    for name in ("records_server", "seed_server", "ledger_server", "structured_server"):
        if (
            len(argv) == 2
            and argv[0] == sys.executable
            and Path(argv[1]).resolve() == FIXTURES / f"{name}.py"
        ):
            return lambda: fresh_fixture(name)
    return None


async def serve_demo(receive: MemoryByteReceive, send: MemoryByteSend) -> None:
    """The demo server's `main()` for stdio, on in-memory pipes, until its input ends."""
    await serve_stdio(fresh_demo().mcp, receive, send)


async def serve_stdio(mcp_server: Any, receive: MemoryByteReceive, send: MemoryByteSend) -> None:
    """An MCPServer's `run("stdio")`, on in-memory pipes, until its input ends."""
    from mcp.server.stdio import stdio_server

    server = mcp_server._lowlevel_server
    try:
        async with stdio_server(stdin=_LinesIn(receive), stdout=_TextOut(send)) as (read, write):  # type: ignore[arg-type]
            await server.run(read, write, server.create_initialization_options())
    finally:
        await send.aclose()


@contextlib.contextmanager
def _counting_here() -> Iterator[None]:
    """Token counts made in this process while the session runs (see conftest's counting_in_process)."""
    from mcpsqueeze.accounting._counter import TokenCounter

    saved = TokenCounter._start_helper
    TokenCounter._start_helper = lambda self: None  # type: ignore[method-assign,assignment,return-value]
    try:
        yield
    finally:
        TokenCounter._start_helper = saved  # type: ignore[method-assign]


@contextlib.asynccontextmanager
async def demo_channel(make: Callable[[], Any] | None = None) -> AsyncIterator[Any]:
    """A JSON-RPC channel to a fresh in-process demo server (or the server `make` makes), closed (its
    input ended) on exit."""
    to_back, back_in = memory_pipe()
    back_out, from_back = memory_pipe()
    async with anyio.create_task_group() as tg:
        tg.start_soon(serve_stdio, (make or (lambda: fresh_demo().mcp))(), back_in, back_out)
        channel = memory_line_channel(from_back, to_back)
        try:
            yield channel
        finally:
            await channel.aclose()  # the server's input ends, as a spawned one's stdin closes
            tg.cancel_scope.deadline = anyio.current_time() + 5  # then it has 5 s to finish


@contextlib.contextmanager
def demo_backends_here() -> Iterator[None]:
    """While open, a `ServerLink` (the backends of `Client` and `serve`) whose command is the demo server's
    (or a fixture MCPServer's: `in_process_server`) gets an in-process one (`demo_channel`) instead of
    spawning it; other backends are spawned as usual."""
    from mcpsqueeze.transports._server_link import ServerLink

    spawn = ServerLink._channel

    def channel(self: ServerLink) -> Any:
        spec = self.spec
        make = None if spec.url is not None else in_process_server([spec.command or "", *spec.args])
        return spawn(self) if make is None else demo_channel(make)

    ServerLink._channel = channel  # type: ignore[method-assign]
    try:
        yield
    finally:
        ServerLink._channel = spawn  # type: ignore[method-assign]


class _Records(logging.Handler):
    def __init__(self, lines: list[str]) -> None:
        super().__init__()
        self.lines = lines
        self.setFormatter(_Prefixed("%(message)s"))

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(self.format(record) + "\n")


class MemoryWrap(RawClient):
    """`mcpsqueeze wrap ARGS -- TARGET` (the demo server by default), in this process; the RawClient
    surface but `proc`. A TARGET that can run here (`in_process_server`: the demo server, the MCPServer
    fixtures) runs on in-memory pipes; any other TARGET is spawned, as the wrap would spawn it."""

    def __init__(
        self,
        args: Sequence[str],
        *,
        target: Sequence[str] | None = None,
        on_request: Callable[[dict[str, Any]], dict[str, Any]] | None = None,
    ) -> None:
        self._start(on_request)
        target = list(target or demo_server())
        self.settings = wrap_settings([*args, "--", *target])
        make = in_process_server(target)
        self.exit_code: int | None = None
        self._stack = contextlib.ExitStack()
        self._stack.enter_context(_counting_here())
        self._log_to_stderr()
        self._portal = self._stack.enter_context(start_blocking_portal("asyncio"))
        self._to_relay, relay_in = memory_pipe()
        relay_out, from_relay = memory_pipe()
        self._out: queue.Queue[bytes | None] = queue.Queue()

        @contextlib.asynccontextmanager
        async def ends(settings: Settings) -> AsyncIterator[tuple[Any, Any]]:
            front = memory_line_channel(relay_in, relay_out)
            if make is None:  # spawned, as wrap spawns it (stdin closed, then terminated, at the end)
                async with open_backend(settings) as back:
                    yield front, back
                return
            async with demo_channel(make) as back:
                yield front, back

        async def run() -> int:
            try:
                return await run_wrap(self.settings, ends)
            finally:
                await relay_out.aclose()  # the process would exit: the agent reads the end of its output

        self._session = self._portal.start_task_soon(run)
        self._portal.start_task_soon(self._pump, from_relay)
        threading.Thread(target=self._read, daemon=True).start()

    def _log_to_stderr(self) -> None:
        """The session's log records, as the CLI would print them on its stderr."""
        logger = logging.getLogger("mcpsqueeze")
        handler = _Records(self.stderr_lines)
        level = logger.level
        logger.addHandler(handler)
        logger.setLevel(self.settings.log_level.upper())
        self._stack.callback(logger.setLevel, level)
        self._stack.callback(logger.removeHandler, handler)

    async def _pump(self, from_relay: MemoryByteReceive) -> None:
        pending = b""
        try:
            while True:
                pending += await from_relay.receive()
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
        self._portal.call(self._to_relay.send, data + b"\n")

    def close(self, timeout: float = 20.0) -> int:
        """Close the agent's input like an agent leaving; return the session's exit code."""
        if self.exit_code is None:
            try:
                self._portal.call(self._to_relay.aclose)
                self.exit_code = self._session.result(timeout)
            finally:
                self._stack.close()
        return self.exit_code

    def __exit__(self, *exc: object) -> None:
        self.close()


class _Served:
    """A door's server run in this process until `stop()`: log records as its stderr, counting here."""

    ready: str  # the pattern of the log line saying it serves; group 1 is where

    def _serve(self, level: str, start: Callable[[Any], Any], timeout: float) -> str:
        self.stderr_lines: list[str] = []
        self.exit_code: int | None = None
        self._stack = contextlib.ExitStack()
        self._stack.enter_context(_counting_here())
        handler = _Records(self.stderr_lines)
        logger = logging.getLogger("mcpsqueeze")
        saved = logger.level
        logger.addHandler(handler)
        logger.setLevel(level.upper())
        self._stack.callback(logger.setLevel, saved)
        self._stack.callback(logger.removeHandler, handler)
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

    def __init__(self, args: Sequence[str], *, demo_in_memory: bool = False, timeout: float = 30.0) -> None:
        """`demo_in_memory`: its demo server backends run in this process too (`demo_backends_here`)."""
        arguments = serve_arguments(args)
        self.settings = arguments[0]
        with contextlib.ExitStack() as backends:
            if demo_in_memory:
                backends.enter_context(demo_backends_here())
            self.where = self._serve(
                self.settings.log_level, lambda until: run_serve(*arguments, until), timeout
            )
            self._stack.enter_context(backends.pop_all())  # undone when it stops


class HttpWrap(_Served):
    """`mcpsqueeze wrap --transport streamable-http --port 0 ARGS -- TARGET`, in this process; `url`."""

    ready = r"(http://127\.0\.0\.1:\d+/mcp)"

    def __init__(self, args: Sequence[str], target: Sequence[str], timeout: float = 30.0) -> None:
        self.settings = wrap_settings(["--transport", "streamable-http", "--port", "0", *args, "--", *target])
        settings = self.settings
        self.url = self._serve(settings.log_level, lambda until: run_wrap(settings, None, until), timeout)
