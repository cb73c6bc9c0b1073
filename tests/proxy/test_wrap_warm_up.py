"""The condense engine's warm-up waits for the first `initialize` answer: before it, its import is
start-up time (it shares the GIL with the relay that answers)."""

from __future__ import annotations

import anyio
import pytest

from mcpsqueeze.proxy import _wrap

pytestmark = pytest.mark.anyio


async def test_the_warm_up_waits_for_the_first_initialize_answer(monkeypatch: pytest.MonkeyPatch) -> None:
    ran: list[str] = []
    monkeypatch.setattr(_wrap, "_warm_up", lambda: ran.append("warm"))
    answered = anyio.Event()
    async with anyio.create_task_group() as tg:
        tg.start_soon(_wrap._warm_up_after, answered, anyio.Event())
        for _ in range(50):  # plenty of turns of the loop: nothing may run before the answer
            await anyio.sleep(0)
        assert ran == []
        answered.set()
        with anyio.fail_after(10):
            while not ran:
                await anyio.sleep(0.01)
    assert ran == ["warm"]


async def test_without_an_answer_the_warm_up_still_runs_after_a_while(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    ran: list[str] = []
    monkeypatch.setattr(_wrap, "_warm_up", lambda: ran.append("warm"))
    monkeypatch.setattr(_wrap, "_WARM_UP_AFTER", 0.05)
    with anyio.fail_after(10):
        await _wrap._warm_up_after(anyio.Event(), anyio.Event())
    assert ran == ["warm"]


async def test_the_retention_sweep_waits_for_the_warm_up(monkeypatch: pytest.MonkeyPatch) -> None:
    """It runs after the warm-up (itself after the first answer), never beside it: two threads beside
    the relay's first calls would each hold the GIL from it."""
    ran: list[object] = []

    async def sweep(settings: object) -> None:
        ran.append(settings)

    monkeypatch.setattr(_wrap, "sweep_forever", sweep)
    monkeypatch.setattr(_wrap, "_warm_up", lambda: ran.append("warm"))
    answered, warm = anyio.Event(), anyio.Event()
    async with anyio.create_task_group() as tg:
        tg.start_soon(_wrap._warm_up_after, answered, warm)
        tg.start_soon(_wrap._sweep_after, warm, "settings")
        for _ in range(50):
            await anyio.sleep(0)
        assert ran == []
        answered.set()
    assert ran == ["warm", "settings"]


def test_the_warm_up_shortens_the_switch_interval_while_it_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    seen: list[float] = []
    monkeypatch.setattr(_wrap, "tame_malloc", lambda: seen.append(sys.getswitchinterval()))
    monkeypatch.setattr(_wrap.gc, "freeze", lambda: None)  # (not this test process's objects)
    before = sys.getswitchinterval()
    _wrap._warm_up()
    assert seen == [min(before, _wrap._WARM_UP_SWITCH)]
    assert sys.getswitchinterval() == before
