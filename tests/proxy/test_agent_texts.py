"""The proxy's own agent-facing texts are pinned: the recover tool, the timeout and backend-gone errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from relay_harness import INITIALIZE, call, run_relay

from mcpsqueeze.core import recover_tool_definition
from rawclient import assert_golden

GOLDEN = Path(__file__).parent / "golden"


def test_the_recover_tool_as_wrap_lists_it_is_pinned() -> None:
    spec = recover_tool_definition("squeeze_recover")
    assert_golden(GOLDEN / "recover_tool.json", json.dumps(spec, indent=2) + "\n")


@pytest.mark.anyio
async def test_the_timeout_error_is_pinned() -> None:
    run = await run_relay([INITIALIZE, call(1, "hang")], timeout=0.2, drain_grace=5)
    error = run.answers_to(1)[0]["error"]
    assert_golden(GOLDEN / "timeout_error.txt", f"{error['code']}\n{error['message']}\n")


@pytest.mark.anyio
async def test_the_backend_gone_error_is_pinned() -> None:
    run = await run_relay([INITIALIZE, call(1, "hang"), call(2, "die")])
    error = run.answers_to(1)[0]["error"]
    assert_golden(GOLDEN / "backend_gone_error.txt", f"{error['code']}\n{error['message']}\n")
