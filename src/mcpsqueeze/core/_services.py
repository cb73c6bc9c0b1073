"""What a session is built from: the recovery store, the stages, accounting and retention."""

from __future__ import annotations

import dataclasses
import logging
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import anyio

from .._errors import RecoveryError
from .._voice import McpVoice, Voice
from ..accounting import Accountant, CallLog, CallObserver
from ..recovery import FileStore, MemoryCache, RecoveryStore, clean_directory, readable_by_others
from ..settings import Settings
from ._pipeline import Pipeline, Stage
from ._reshape import ProjectStage, StructuredStage
from ._stages import DedupStage, ShrinkStage, ToonStage, Workers

if TYPE_CHECKING:
    from ..accounting import Metrics

__all__ = [
    "SessionServices",
    "build_services",
    "build_store",
    "for_caller",
    "new_pipeline",
    "sweep_forever",
]

logger = logging.getLogger(__name__)


@dataclass
class SessionServices:
    """What every relay of one proxy process shares."""

    accountant: Accountant
    store: RecoveryStore | None
    workers: Workers
    server_name: str
    timeout: float | None = None
    metrics: Metrics | None = None  # for GET /metrics on the HTTP doors
    page_size: int | None = None  # the recover tool's answers longer than this come in pages (MCP doors)


def build_store(settings: Settings) -> RecoveryStore | None:
    if not (_stage_on(settings, "shrink") or _stage_on(settings, "dedup") or _stage_on(settings, "toonify")):
        return None
    memory = files = None
    if settings.recovery in ("memory", "both"):
        ttl = math.inf if settings.cache_ttl is None else settings.cache_ttl  # entries and bytes bound it
        memory = MemoryCache(ttl, settings.cache_entries, settings.cache_bytes)
    if settings.recovery in ("files", "both"):
        try:
            files = FileStore(settings.recovery_dir)
            warning = readable_by_others(files.directory)
            if warning:
                logger.warning(f"mcpsqueeze: warning: {warning}")
        except RecoveryError as exc:
            if memory is None:
                raise
            logger.warning(f"mcpsqueeze: recovery files disabled: {exc}")
    shared = None
    if settings.recovery_url is not None:
        from ..recovery import RedisStore

        shared = RedisStore(settings.recovery_url, settings.retention)
        if not shared.ping():
            logger.warning(
                "mcpsqueeze: the Redis recovery store does not answer yet; "
                "results pass unshrunk until it does"
            )
    return RecoveryStore(memory, files, shared).scoped(settings.tenant or "default")


def for_caller(services: SessionServices, principal: str | None, named: bool) -> SessionServices:
    """The services one caller uses: its originals and dedup index scoped to its tenant. A tenant the
    token file names (`named`) wins; else the configured `tenant`; else the plain token's principal."""
    store = services.store
    if store is None or principal is None:
        return services
    tenant = principal if named else store.tenant if store.tenant != "default" else principal
    return dataclasses.replace(services, store=store.scoped(tenant, isolate=named))


def build_services(settings: Settings, metrics: bool = False) -> SessionServices:
    """`metrics`: also keep Prometheus metrics (the doors that serve HTTP expose them)."""
    observers: list[CallObserver] = [CallLog()]
    registry = None
    if metrics:
        from ..accounting import Metrics

        registry = Metrics()
        observers.append(registry)
    accountant = Accountant(settings.stats_file, observers, settings.fastokens)
    store = build_store(settings)
    if store is not None:
        store.on_get = accountant.record_recovery
    return SessionServices(
        accountant=accountant,
        store=store,
        workers=Workers(settings.jobs),
        server_name=settings.server_name,
        timeout=settings.timeout,
        metrics=registry,
        page_size=settings.page_size,
    )


def new_pipeline(
    settings: Settings,
    services: SessionServices,
    voice: Voice | None = None,
    dedup_scope: str | None = None,
    dedup: bool = True,
    *,
    shared_calls: bool = True,
) -> Pipeline:
    """The stages of one conversation, in order: dedup, projection, shrink, TOON (opt-in), structured.
    ``voice`` words recovery (default: the MCP recover tool); ``dedup_scope`` names this conversation in a
    shared store: its dedup index, and (``shared_calls``) the record of what each call showed, for
    `full` on another replica. No dedup for a voice without pointers (the shell: a pointer piped into
    `jq` reads as an empty answer), nor with ``dedup=False`` (calls of no conversation)."""
    voice = McpVoice() if voice is None else voice
    stages: list[Stage] = []
    store, workers = services.store, services.workers
    if store is not None:
        if dedup and _stage_on(settings, "dedup") and voice.allows_pointers:
            stages.append(DedupStage(store, workers, services.accountant.count, dedup_scope))
        if settings.policy.query is not None or any(  # some call may be projected: a session-wide query
            isinstance(r.values.get("query"), str)
            for r in settings.policies.rules  # or a per-tool one
        ):
            stages.append(ProjectStage(store, workers))
        if _stage_on(settings, "shrink"):
            stages.append(ShrinkStage(store, workers))
        if _stage_on(settings, "toonify"):
            stages.append(ToonStage(store, workers))
        # what a client that shows structuredContent gets, and --drop-duplicate-structured for any other
        if settings.client != "none" or _stage_on(settings, "drop_duplicate_structured"):
            stages.append(StructuredStage(store, workers))
    policy_for = settings.policies.resolver(settings.policy)
    scope = dedup_scope if shared_calls else None
    return Pipeline(stages, services.accountant, policy_for, store, voice, services.page_size, scope)


def _stage_on(settings: Settings, key: str) -> bool:
    """A stage runs when the session default has it on or some per-tool policy turns it on."""
    return bool(getattr(settings.policy, key)) or settings.policies.may_enable(key)


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
                logger.warning(f"mcpsqueeze: retention removed {len(report.deleted)} old original(s)")
        except (RecoveryError, OSError) as exc:
            logger.warning(f"mcpsqueeze: retention sweep skipped: {exc}")
        await anyio.sleep(3600)
