"""MCP tools as commands inside a Just-Bash virtual shell (the ``mcpsqueeze[just-bash]`` extra).

``open_bash`` gives an ``AsyncBash`` where every server of the session is a command and ``mcpsq`` works as on
the host, with the host recovery directory mounted read-only at ``/recovery`` (symlinks refused) and nothing
else of the host visible; ``install_into`` adds the same to a shell the host built. The commands reuse the
shim's core, show host paths as ``/recovery/...``, and read only recovery files. Errors, refused writes and
limits all come back as exit codes.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Coroutine, Generator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from just_bash import (
    AsyncBash,
    AsyncCustomCommandCallback,
    AsyncCustomCommandContext,
    ExecResult,
    InMemoryFs,
    MountableFs,
    MountConfig,
    OverlayFs,
)
from just_bash import BackendError as JustBashBackendError
from just_bash._custom_commands import CustomCommandResultDict
from just_bash._options import ExecOptions

from mcpsqueeze._errors import EXIT_BACKEND, BackendError, MCPSqueezeError, UsageError, exit_code

from ._core import Printout, command, listing_of

if TYPE_CHECKING:
    from ._core import Answer, Ask
from ._names import server_command
from ._session_http import DEFAULT_CALL_TIMEOUT, SessionClient

__all__ = [
    "MOUNT_POINT",
    "AsyncSessionClient",
    "OpeningBash",
    "ShellSession",
    "bash_commands",
    "install_into",
    "open_bash",
    "recovery_mount",
]

logger = logging.getLogger(__name__)

MOUNT_POINT = "/recovery"
CommandCallback = AsyncCustomCommandCallback


class ShellSession(Protocol):
    """The one seam to the session: a request of its HTTP API, answered as (status, JSON)."""

    async def request(
        self, method: str, path: str, body: object = None, *, timeout: float | None = 30.0
    ) -> tuple[int, object]: ...


class AsyncSessionClient:
    """The shim's stdlib client, one worker thread per request, so the event loop never blocks."""

    def __init__(self, client: SessionClient | None = None) -> None:
        self.client = client or SessionClient.from_environ()

    async def request(
        self, method: str, path: str, body: object = None, *, timeout: float | None = 30.0
    ) -> tuple[int, object]:
        return await asyncio.to_thread(self.client.request, method, path, body, timeout=timeout)


def recovery_mount(recovery_dir: Path | str) -> MountConfig:
    """``/recovery``: the host directory, read-only, symlinks refused."""
    return MountConfig(
        mount_point=MOUNT_POINT,
        filesystem=OverlayFs(root=str(recovery_dir), mount_point="/", read_only=True, allow_symlinks=False),
    )


async def _drive(flow: Generator[Ask, Answer, Printout], session: ShellSession, timeout: float) -> Printout:
    """Run a command with the shell's session, as the shim does with blocking requests."""
    try:
        method, path, body, wait = next(flow)
        while True:
            try:
                answer = await session.request(method, path, body, timeout=timeout if wait is None else wait)
            except MCPSqueezeError as exc:
                method, path, body, wait = flow.throw(exc)
            else:
                method, path, body, wait = flow.send(answer)
    except StopIteration as done:
        return done.value  # type: ignore[no-any-return]


def bash_commands(
    session: ShellSession,
    recovery_dir: Path | str,
    servers: list[str],
    *,
    timeout: float = DEFAULT_CALL_TIMEOUT,
) -> dict[str, CommandCallback]:
    """The custom commands: one per server, plus ``mcpsq``; pass them to ``AsyncBash``."""
    directory = os.path.abspath(recovery_dir)

    def command_for(server: str | None) -> CommandCallback:
        prefix = "" if server is not None else "mcpsq "
        lead = [server] if server is not None else []

        async def callback(args: list[str], ctx: AsyncCustomCommandContext) -> CustomCommandResultDict:
            flow = command(
                [*lead, *args],
                prefix=prefix,
                read_stdin=lambda: ctx.stdin,
                recovery_dir=directory,
                paths=(directory, MOUNT_POINT),
                cwd=ctx.cwd,
            )
            try:
                outcome = await _drive(flow, session, timeout)
            except (BackendError, UsageError) as exc:
                outcome = Printout(stderr=f"{server or 'mcpsq'}: {exc}\n", code=exit_code(exc))
            except Exception as exc:  # a command must end with an exit code, never a traceback
                outcome = Printout(
                    stderr=f"{server or 'mcpsq'}: internal error ({type(exc).__name__}: {exc}); "
                    "please report it with the command you ran.\n",
                    code=EXIT_BACKEND,
                )
            return {"stdout": outcome.stdout, "stderr": outcome.stderr, "exit_code": outcome.code}

        return callback

    table: dict[str, CommandCallback] = {"mcpsq": command_for(None)}
    for server in servers:
        name, warning = server_command(server)
        if warning:
            logger.warning("mcpsqueeze: %s", warning)
        table.setdefault(name, command_for(name))  # `mcp-time` resolves to the server `time`
    return table


def _guard_writes(bash: AsyncBash) -> None:
    """Make a refused write (EROFS under /recovery) an exit code instead of a Python exception."""
    original = bash.exec_with_options

    async def exec_with_options(command_line: str, options: ExecOptions) -> ExecResult:
        try:
            return await original(command_line, options)
        except JustBashBackendError as exc:
            return ExecResult(stdout="", stderr=f"bash: {exc}\n", exit_code=1)

    bash.exec_with_options = exec_with_options  # type: ignore[method-assign]


class OpeningBash:
    """What ``open_bash`` returns: await it for the opened shell, or use it in ``async with`` (which
    opens the shell, gives it to the block and closes it after). ``async with await open_bash()``
    works too: an ``AsyncBash`` is its own context manager."""

    def __init__(self, opening: Coroutine[Any, Any, AsyncBash]) -> None:
        self._opening: Coroutine[Any, Any, AsyncBash] | None = opening
        self._bash: AsyncBash | None = None

    def _take(self) -> Coroutine[Any, Any, AsyncBash]:
        opening, self._opening = self._opening, None
        if opening is None:
            raise UsageError("this open_bash(...) was already opened; call open_bash again for another shell")
        return opening

    def __await__(self) -> Generator[Any, None, AsyncBash]:
        return self._take().__await__()

    async def __aenter__(self) -> AsyncBash:
        self._bash = await self._take()
        return self._bash

    async def __aexit__(self, *_: object) -> None:
        if self._bash is not None:
            await self._bash.close()

    def __del__(self) -> None:
        if self._opening is not None:  # never awaited: no "coroutine was never awaited" warning
            self._opening.close()


def open_bash(
    session: ShellSession | None = None,
    recovery_dir: Path | str | None = None,
    *,
    cwd: str = "/home/agent",
    timeout: float = DEFAULT_CALL_TIMEOUT,
    **bash_options: Any,
) -> OpeningBash:
    """An opened ``AsyncBash`` with the session's tools as commands and ``/recovery`` mounted (``session``:
    found through the environment; ``recovery_dir``: the session's). Other keywords go to ``AsyncBash``.
    ``await open_bash()`` (then ``await bash.close()``) or ``async with open_bash() as bash:``."""

    async def opening() -> AsyncBash:
        if "fs" in bash_options or "custom_commands" in bash_options:
            raise UsageError(
                "open_bash builds fs and custom_commands itself; use install_into for your own shell."
            )
        bash = AsyncBash(cwd=cwd, **bash_options)  # an in-memory file system under /recovery, our commands
        await install_into(bash, session, recovery_dir, timeout=timeout)
        await bash.__aenter__()
        return bash

    return OpeningBash(opening())


async def install_into(
    bash: AsyncBash,
    session: ShellSession | None = None,
    recovery_dir: Path | str | None = None,
    *,
    timeout: float = DEFAULT_CALL_TIMEOUT,
) -> list[str]:
    """Add the commands and the ``/recovery`` mount to a shell the host built, before its first ``exec``; the
    command names. Its file system becomes the base under ``/recovery``, which is ``recovery_dir`` (by
    default the session's)."""
    if bash._bridge is not None or bash.closed:
        raise UsageError(
            "install_into needs a shell that has not run anything yet (Just-Bash fixes its commands when "
            "it starts); call it right after creating the AsyncBash."
        )
    api: ShellSession = session if session is not None else AsyncSessionClient()
    listing = listing_of(*await api.request("GET", "/v1/servers"))
    if isinstance(listing, Printout):
        raise BackendError(listing.stderr.strip())
    directory = recovery_dir if recovery_dir is not None else listing.recovery_dir
    if directory is None:
        raise UsageError("The session did not report its recovery directory; pass recovery_dir explicitly.")
    ours = bash_commands(api, directory, [s.name for s in listing.servers], timeout=timeout)
    options = bash._options
    mount = recovery_mount(directory)
    fs = options.fs
    if isinstance(fs, MountableFs):
        mounts = [m for m in fs.mounts or [] if m.mount_point != MOUNT_POINT]
        options.fs = MountableFs(base=fs.base, mounts=[*mounts, mount])
    else:
        options.fs = MountableFs(base=fs if fs is not None else InMemoryFs(), mounts=[mount])
    existing: Mapping[str, Any] = options.custom_commands or {}
    merged: dict[str, Any] = {**ours, **existing}  # the host's own commands win on a name clash
    options.custom_commands = merged
    bash._custom_commands = merged
    _guard_writes(bash)
    return [name for name in ours if existing.get(name) is None]
