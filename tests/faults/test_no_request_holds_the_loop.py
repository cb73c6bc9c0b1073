"""No single hostile request holds wrap's event loop: while each is answered, a task on the same loop
(loop_lag.py) wakes on time within 100 ms, so every other session and request goes on. The requests are
those of hostile_inputs.py: a listing of 1,000-deep schemas, an invoke of 20,000 unknown keys, grep inside
a UTF-8 character, grep and search of a deep long-keyed original, a page of fifty copies of a 2 MB
original."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from loop_lag import held

from hostile_inputs import (
    CLOSED,
    HOSTILE_INPUT,
    UTF8,
    WIDE,
    deep_anyof,
    deep_items,
    long_keys_nested_deep,
    tool_text,
)
from memwrap import MemoryWrap

# The backend in its own process: a backend thread here would hold the loop (the CPU) being measured.
pytestmark = pytest.mark.real_processes("backends")


@pytest.fixture(autouse=True, scope="module")
def vocabulary_loaded() -> None:
    """The token counter's vocabulary is loaded before any hold is measured: its build holds the
    interpreter for a few hundred ms, once per process (wrap builds it after a lull without calls).
    The counting itself runs as in wrap, on its thread, span by span."""
    from mcpsqueeze.accounting import _tokens

    _tokens.encoding()


BACKEND = Path(__file__).parents[1] / "fixtures" / "raw_tools_backend.py"
STALL = 0.1  # seconds
TRIES = 3


def _hold(client: MemoryWrap, ask: Callable[[], Any]) -> float:
    """The loop's longest hold while ``ask()`` is answered, the least of up to TRIES tries: a request that
    holds the loop does so every time, while a core taken by other tests on the machine comes and goes."""
    holds = []
    for _ in range(TRIES):
        with held(client._portal) as lag:
            ask()
        holds.append(lag.worst)
        if lag.worst < STALL:
            break
    return min(holds)


def test_compressed_listing_and_invoke_requests_do_not_hold_the_loop(tmp_path: Path) -> None:
    tools = tmp_path / "tools.json"
    listed = [tool_text("deep_anyof", deep_anyof(400)), tool_text("deep_items", deep_items(1000))]
    tools.write_text("[" + ",".join([*listed, json.dumps(WIDE), json.dumps(CLOSED)]) + "]")
    args = ["--recovery-dir", str(tmp_path / "rec"), "--compress-tools", "medium"]
    worst = {}
    client = MemoryWrap(args, target=[sys.executable, str(BACKEND), str(tools)])
    with client:
        client.initialize()
        client.result("tools/list")  # the backend's own time to answer is not the proxy's
        requests: dict[str, tuple[str, dict[str, Any]]] = {
            "listing": ("tools/list", {}),
            "schema": (
                "tools/call",
                {"name": "server_get_tool_schema", "arguments": {"tool_name": "deep_items"}},
            ),
            "invoke": (
                "tools/call",
                {
                    "name": "server_invoke_tool",
                    "arguments": {"tool_name": "closed", "tool_input": HOSTILE_INPUT},
                },
            ),
        }
        for name, (method, params) in requests.items():
            worst[name] = _hold(client, lambda: client.request(method, params, timeout=60))  # noqa: B023
        assert client.close() == 0
    assert all(seconds < STALL for seconds in worst.values()), worst


def test_recover_requests_of_big_originals_do_not_hold_the_loop(tmp_path: Path) -> None:
    pages = "".join(f"line {n:06d} of the original\n" for n in range(80_000))
    worst = {}
    client = MemoryWrap(["--recovery-dir", str(tmp_path / "rec"), "--budget", "2000"])
    with client:
        client.initialize()
        ids = {
            name: client.call("echo", {"text": text}, timeout=60)["_meta"]["truncation"]["response_id"]
            for name, text in (("utf8", UTF8), ("keys", long_keys_nested_deep()), ("pages", pages))
        }
        asks: dict[str, tuple[str, dict[str, Any]]] = {
            "grep inside a character": ("utf8", {"grep": "\\Cx"}),
            "grep long keys": ("keys", {"grep": "word 1"}),
            "search long keys": ("keys", {"search": "word"}),
            "page of fifty copies": ("pages", {"lines": ",".join(["1-"] * 50), "page": 700}),
        }
        for name, (which, ask) in asks.items():

            def recover() -> None:
                answer = client.call("squeeze_recover", {"response_id": ids[which], **ask}, timeout=60)  # noqa: B023
                assert answer.get("isError") is not True, (name, answer)  # noqa: B023

            worst[name] = _hold(client, recover)
        assert client.close() == 0
    assert all(seconds < STALL for seconds in worst.values()), worst
