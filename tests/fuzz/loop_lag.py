"""How long an in-process door's event loop was held: `with held(portal) as lag:` runs a task on the
door's loop that wakes every 5 ms; `lag.worst` is the longest it waited past its time, in seconds.

A wait counts the process's CPU time over it, no more than the wall time: a loop held by work (its own,
or a thread holding the GIL) burns CPU the whole time, while a process the OS left waiting for a core
(other tests on a loaded machine) does not; so the figure is the hold, whatever else the machine runs."""

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
            wall, cpu = time.perf_counter(), time.process_time()
            await anyio.sleep(TICK)
            waited = min(time.perf_counter() - wall, time.process_time() - cpu)
            lag.worst = max(lag.worst, waited - TICK)

    running = portal.start_task_soon(watch)
    try:
        yield lag
    finally:
        portal.call(stop.set)
        running.result(10)
