"""What every door onto the pipeline shares: recovery store, stages, accounting, retention, the HTTP server.

`wrap` (MCP over stdio or HTTP) and `serve` (the shim's API) both build their sessions from here.
"""

from __future__ import annotations

import contextlib
import signal
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import anyio

from ._errors import RecoveryError
from .pipeline import Pipeline, Stage
from .recovery import FileStore, MemoryCache, RecoveryStore, clean_directory
from .recovery._files import readable_by_others
from .settings import Settings
from .stages import DedupStage, ShrinkStage, Workers
from .stats import Accountant

__all__ = [
    "SessionServices",
    "build_services",
    "build_store",
    "new_pipeline",
    "on_signals",
    "sweep_forever",
    "uvicorn_server",
]


@dataclass
class SessionServices:
    """What every relay of one proxy process shares."""

    accountant: Accountant
    store: RecoveryStore | None
    workers: Workers
    server_name: str
    timeout: float | None = None


def build_store(settings: Settings) -> RecoveryStore | None:
    if not (settings.shrink or settings.dedup):
        return None
    memory = files = None
    if settings.recovery in ("memory", "both"):
        memory = MemoryCache(settings.cache_ttl, settings.cache_entries, settings.cache_bytes)
    if settings.recovery in ("files", "both"):
        try:
            files = FileStore(settings.recovery_dir)
            warning = readable_by_others(files.directory)
            if warning:
                print(f"mcpsqueeze: warning: {warning}", file=sys.stderr)
        except RecoveryError as exc:
            if memory is None:
                raise
            print(f"mcpsqueeze: recovery files disabled: {exc}", file=sys.stderr)
    return RecoveryStore(memory, files)


def build_services(settings: Settings) -> SessionServices:
    return SessionServices(
        accountant=Accountant(settings.stats_file),
        store=build_store(settings),
        workers=Workers(settings.jobs),
        server_name=settings.server_name,
        timeout=settings.timeout,
    )


def new_pipeline(settings: Settings, services: SessionServices, mode: str = "mcp") -> Pipeline:
    """The stages of one session, in the contract's order: dedup, then shrink.

    The shell door never deduplicates: there stdout must always carry the result's data, because a
    pointer (or nothing) piped into `jq` or `grep` reads as an empty answer.
    """
    stages: list[Stage] = []
    store = services.store
    recover_tool = "squeeze_recover" if mode == "mcp" else None
    if store is not None and settings.dedup and mode == "mcp":
        stages.append(DedupStage(store, services.workers, services.accountant.count, recover_tool))
    if store is not None and settings.shrink:
        stages.append(
            ShrinkStage(store, services.workers, settings.budget, "mcp" if mode == "mcp" else "shell")
        )
    return Pipeline(stages, services.accountant)


async def sweep_forever(settings: Settings) -> None:
    """Retention: sweep our own recovery directory at start and hourly."""
    if settings.retention is None or settings.recovery == "memory":
        return
    while True:
        try:
            report = await anyio.to_thread.run_sync(
                clean_directory, settings.recovery_dir, settings.retention
            )
            if report.deleted:
                print(f"mcpsqueeze: retention removed {len(report.deleted)} old original(s)", file=sys.stderr)
        except (RecoveryError, OSError) as exc:
            print(f"mcpsqueeze: retention sweep skipped: {exc}", file=sys.stderr)
        await anyio.sleep(3600)


async def on_signals(stop: Callable[[], None]) -> None:
    """Call `stop` on the first SIGINT or SIGTERM: the caller then ends cleanly and prints its summary."""
    with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
        async for _ in signals:
            stop()
            return


def uvicorn_server(config: Any) -> Any:
    """uvicorn's server without its own signal handling: ours stops it gracefully and prints the summary."""
    import uvicorn

    class Server(uvicorn.Server):
        @contextlib.contextmanager
        def capture_signals(self) -> Any:
            yield

    return Server(config)
