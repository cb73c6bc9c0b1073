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
        tg.start_soon(_wrap._warm_up_after, answered)
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
        await _wrap._warm_up_after(anyio.Event())
    assert ran == ["warm"]


async def test_the_retention_sweep_also_waits_for_the_first_answer(monkeypatch: pytest.MonkeyPatch) -> None:
    ran: list[object] = []

    async def sweep(settings: object) -> None:
        ran.append(settings)

    monkeypatch.setattr(_wrap, "sweep_forever", sweep)
    answered = anyio.Event()
    async with anyio.create_task_group() as tg:
        tg.start_soon(_wrap._sweep_after, answered, "settings")
        for _ in range(50):
            await anyio.sleep(0)
        assert ran == []
        answered.set()
    assert ran == ["settings"]
