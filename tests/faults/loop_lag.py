"""How long an in-process door's event loop was held: `with held(portal) as lag:` runs a task on the
door's loop that wakes every 5 ms; `lag.worst` is the longest it waited past its time, in seconds."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import anyio

TICK = 0.005


@dataclass
class Lag:
    worst: float = 0.0


@contextlib.contextmanager
def held(portal: Any) -> Iterator[Lag]:
    lag = Lag()
    stop: anyio.Event = portal.call(anyio.Event)

    async def watch() -> None:
        while not stop.is_set():
            before = time.perf_counter()
            await anyio.sleep(TICK)
            lag.worst = max(lag.worst, time.perf_counter() - before - TICK)

    running = portal.start_task_soon(watch)
    try:
        yield lag
    finally:
        portal.call(stop.set)
        running.result(10)
