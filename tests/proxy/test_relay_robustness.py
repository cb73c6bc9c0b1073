"""The relay against bad input from either side, in-process over in-memory pipes: each test is a case
that could crash it, hang it or corrupt its stdout, and must not.
"""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from relay_harness import (
    INITIALIZE,
    Backend,
    MemoryByteReceive,
    MemoryByteSend,
    call,
    check_jsonrpc,
    deep,
    line,
    read_message,
    request,
    run_relay,
)

pytestmark = pytest.mark.anyio

INVALID_REQUEST = -32600
PARSE_ERROR = -32700
TIMEOUT = -32001


def _depth(value: Any) -> int:
    """Depth of a chain of nested arrays, without recursion (== on 1,000 levels would overflow)."""
    levels = 0
    while isinstance(value, list):
        levels += 1
        value = value[0] if value else None
    return levels


def _text(message: dict[str, Any]) -> str:
    return "".join(b["text"] for b in message["result"]["content"])


@pytest.mark.parametrize("bad_id", [[1, 2], {"a": 1}, [], {}, True, None])
async def test_a_request_id_that_is_an_array_object_bool_or_null_gets_invalid_request_not_a_crash(
    bad_id: Any,
) -> None:
    run = await run_relay([INITIALIZE, request(bad_id, "ping"), call(1, "echo", text="after")])
    errors = [m for m in run.responses() if "error" in m]
    assert [e["error"]["code"] for e in errors] == [INVALID_REQUEST]
    assert errors[0]["id"] is None
    assert _text(run.answers_to(1)[0]) == "after"
    assert all(m.get("method") != "ping" for m in run.backend.received)


@pytest.mark.parametrize("bad", [[1], {"t": 1}, True])
async def test_an_array_or_object_progress_token_or_cancelled_request_id_is_survived(bad: Any) -> None:
    with_token = request(
        1, "tools/call", {"name": "storm", "arguments": {"n": 3}, "_meta": {"progressToken": bad}}
    )
    cancel = line({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": bad}})
    run = await run_relay([INITIALIZE, with_token, cancel, call(2, "echo", text="still here")])
    assert len(run.answers_to(1)) == 1
    assert _text(run.answers_to(2)[0]) == "still here"


async def test_a_backend_reply_with_an_id_never_sent_is_dropped_and_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    run = await run_relay([INITIALIZE, call(1, "wrong_id", text="mine")])
    assert [m["id"] for m in run.responses()] == [0, 1]
    assert _text(run.answers_to(1)[0]) == "mine"
    assert "never sent" in caplog.text


async def test_a_backend_request_with_an_object_id_is_refused_towards_the_backend_not_forwarded() -> None:
    run = await run_relay([INITIALIZE, call(1, "ask", text="asked")])
    assert all(m.get("method") != "roots/list" for m in run.messages())
    refusals = [m for m in run.backend.received if "error" in m]
    assert refusals and refusals[0]["error"]["code"] == INVALID_REQUEST
    assert _text(run.answers_to(1)[0]) == "asked"


@pytest.mark.parametrize("depth", [253, 254, 255, 300, 600, 990, 1015])
async def test_deeply_nested_messages_pass_both_ways_up_to_the_parse_limit(depth: int) -> None:
    deep_call = (
        b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":'
        b'{"text":"x","payload":' + deep(depth).encode() + b"}}}\n"
    )
    run = await run_relay([INITIALIZE, deep_call, call(2, "deep", depth=depth)])
    forwarded = [
        m for m in run.backend.received if m.get("id") is not None and m.get("method") == "tools/call"
    ]
    assert _depth(forwarded[0]["params"]["arguments"]["payload"]) == depth
    assert _text(run.answers_to(1)[0]) == "x"
    assert _depth(run.answers_to(2)[0]["result"]) == depth


@pytest.mark.parametrize("depth", [1_100, 10_000, 100_000])
async def test_messages_nested_beyond_the_parse_limit_get_a_clear_error_from_either_side(depth: int) -> None:
    too_deep = b'{"jsonrpc":"2.0","id":5,"method":"ping","params":' + deep(depth).encode() + b"}\n"
    run = await run_relay([INITIALIZE, too_deep, call(6, "deep", depth=depth), call(7, "echo", text="ok")])
    agent_error = run.answers_to(5)[0]["error"]
    assert agent_error["code"] == PARSE_ERROR and "nested deeper" in agent_error["message"]
    backend_error = run.answers_to(6)[0]["error"]
    assert "could not be read" in backend_error["message"] and "nested deeper" in backend_error["message"]
    assert _text(run.answers_to(7)[0]) == "ok"


@pytest.mark.parametrize(
    "raw",
    [
        b'{"jsonrpc":"2.0","id":3,"method":"ping","params":{"x":NaN}}',
        b'{"jsonrpc":"2.0","id":3,"method":"ping","params":{"x":Infinity}}',
        b'{"jsonrpc":"2.0","id":3,"method":"ping","params":{"x":-Infinity}}',
        b'{"jsonrpc":"2.0","id":3,"method":"ping","params":{"x":1e400}}',
        b'{"jsonrpc":"2.0","id":3,"method":"ping","params":{"x":"\xed\xa0\x80"}}',
        b'{"jsonrpc":"2.0","id":3,"method":"ping","params":{"x":12345678901234567890123,"y":NaN}}',
        b'{"jsonrpc":"2.0","id":3,"method":"ping","params":{"x":"\xed\xa0\x80","n":12345678901234567890123}}',
    ],
)
async def test_non_rfc8259_input_from_the_agent_is_a_parse_error_and_never_forwarded(raw: bytes) -> None:
    run = await run_relay([INITIALIZE, raw + b"\n", call(4, "echo", text="fine")])
    answer = run.answers_to(3)
    assert len(answer) == 1 and answer[0]["error"]["code"] == PARSE_ERROR
    assert all(m.get("method") != "ping" for m in run.backend.received)
    assert _text(run.answers_to(4)[0]) == "fine"


async def test_a_backend_reply_with_nan_is_answered_with_an_error_never_forwarded_as_invalid_json() -> None:
    run = await run_relay([INITIALIZE, call(1, "nan")])
    for raw in run.out:
        assert b":NaN" not in raw
    assert "could not be read" in run.answers_to(1)[0]["error"]["message"]


async def test_big_integers_and_lone_surrogate_escapes_still_pass_field_for_field() -> None:
    raw = (
        b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":'
        b'{"text":"a\\ud800b","n":123456789012345678901234567890}}}\n'
    )
    run = await run_relay([INITIALIZE, raw])
    forwarded = run.backend.received[-1]["params"]["arguments"]
    assert forwarded == {"text": "a\ud800b", "n": 123456789012345678901234567890}
    assert _text(run.answers_to(1)[0]) == "a\ud800b"


async def test_a_reused_id_after_timeout_never_gets_the_old_calls_late_answer() -> None:
    async def agent(send: MemoryByteSend, receive: MemoryByteReceive, backend: Backend) -> None:
        pending: list[bytes] = []
        await send.send(INITIALIZE)
        await read_message(receive, pending)
        await send.send(call(7, "slow", text="old"))
        timed_out = await read_message(receive, pending)
        assert timed_out["id"] == 7 and timed_out["error"]["code"] == TIMEOUT
        backend.release.set()  # the old call's answer arrives late...
        await send.send(call(7, "echo", text="new"))  # ...while the id is reused
        answer = await read_message(receive, pending)
        assert answer["id"] == 7 and _text(answer) == "new"
        await send.send(call(8, "echo", text="barrier"))
        assert _text(await read_message(receive, pending)) == "barrier"

    run = await run_relay(agent, timeout=0.5)
    assert run.responses() == []  # nothing more: the late answer was dropped


async def test_two_concurrent_requests_with_one_id_each_get_their_own_answer() -> None:
    async def agent(send: MemoryByteSend, receive: MemoryByteReceive, backend: Backend) -> None:
        pending: list[bytes] = []
        await send.send(INITIALIZE)
        await read_message(receive, pending)
        await send.send(call(9, "slow", text="first " * 5000))
        await send.send(call(9, "slow", text="second " * 5000))
        while len([m for m in backend.received if m.get("method") == "tools/call"]) < 2:
            await anyio.sleep(0.01)
        backend.release.set()
        answers = [await read_message(receive, pending) for _ in range(2)]
        assert [a["id"] for a in answers] == [9, 9]
        # each answer is its own call's, and both went through the pipeline (shrunk to the budget)
        texts = [_text(a) for a in answers]
        assert sorted(("first first" in t, "second second" in t) for t in texts) == [
            (False, True),
            (True, False),
        ]
        assert all(len(_text(a)) <= 2000 and "truncation" in a["result"]["_meta"] for a in answers)

    run = await run_relay(agent, budget=2000)
    assert run.responses() == []


async def test_closing_stdin_right_after_a_request_still_delivers_the_reply() -> None:
    backend = Backend()
    backend.release.set()
    run = await run_relay([INITIALIZE, call(1, "slow", text="late but delivered")], backend=backend)
    assert _text(run.answers_to(1)[0]) == "late but delivered"


async def test_a_request_still_unanswered_after_the_drain_grace_gets_an_error() -> None:
    run = await run_relay([INITIALIZE, call(1, "hang")], drain_grace=0.2)
    error = run.answers_to(1)[0]["error"]
    assert "closed" in error["message"] and "hang" in error["message"]


async def test_a_backend_dying_mid_call_answers_every_pending_request_once() -> None:
    run = await run_relay([INITIALIZE, call(1, "hang"), call(2, "hang"), call(3, "die")])
    for request_id in (1, 2, 3):
        answers = run.answers_to(request_id)
        assert len(answers) == 1 and "not running" in answers[0]["error"]["message"]
    assert run.exit_code == 3


async def test_a_storm_of_notifications_is_relayed_in_order_and_the_answer_follows() -> None:
    run = await run_relay(
        [
            INITIALIZE,
            request(
                1, "tools/call", {"name": "storm", "arguments": {"n": 2000}, "_meta": {"progressToken": "p"}}
            ),
        ]
    )
    progress = [
        m["params"]["progress"] for m in run.messages() if m.get("method") == "notifications/progress"
    ]
    assert progress == list(range(2000))
    assert len(run.answers_to(1)) == 1


def test_every_line_the_harness_checks_must_be_jsonrpc() -> None:
    """The invariant checker itself can fail (so the fuzz suite can)."""
    for bad in (
        b'{"jsonrpc":"2.0","id":NaN,"result":{}}',
        b'{"jsonrpc":"2.0","id":[1],"result":{}}',
        b"\xff",
    ):
        with pytest.raises((ValueError, AssertionError)):
            check_jsonrpc(bad)


class _SlowStage:
    """A result stage that takes a while (like shrinking 50 MB), and says when it has started."""

    def __init__(self) -> None:
        self.started = anyio.Event()

    async def __call__(self, call: Any, result: dict[str, Any], outcome: Any) -> dict[str, Any]:
        self.started.set()
        await anyio.sleep(0.2)  # far beyond the drain grace below
        return {**result, "content": [{"type": "text", "text": "presented"}]}


async def test_a_short_drain_grace_never_cuts_an_answer_already_being_presented() -> None:
    """Found by the fuzz campaign under load: the flush after the grace was bounded by the grace itself."""
    stage = _SlowStage()

    async def agent(send: MemoryByteSend, receive: MemoryByteReceive, backend: Backend) -> None:
        await send.send(INITIALIZE)
        await send.send(call(1, "echo", text="m"))
        with anyio.fail_after(30):
            await stage.started.wait()
        # returning closes the agent's side: the drain begins with the result still being presented

    run = await run_relay(agent, drain_grace=0.001, stages=[stage])
    (answer,) = run.answers_to(1)
    assert _text(answer) == "presented"


async def test_an_unchanged_answer_reaches_the_agent_as_the_backends_bytes_with_only_the_id_changed() -> None:
    run = await run_relay([INITIALIZE, call("agent-7", "echo", text="as sent")])
    answer = {"jsonrpc": "2.0", "id": "agent-7", "result": {"content": [{"type": "text", "text": "as sent"}]}}
    # The backend writes json.dumps's spacing; a re-serialised answer would be compact.
    assert line(answer).rstrip(b"\n") in run.out


async def test_token_counting_waits_while_a_call_is_with_the_backend(monkeypatch: pytest.MonkeyPatch) -> None:
    """The agent waits while the backend works: the counter sees the relay busy from the forward to the
    answer (its helper then takes no CPU from the backend), and idle again after every way a call ends."""
    from mcpsqueeze.accounting import _counter

    seen: list[int] = []
    real_busy = _counter.TokenCounter.busy

    def busy(self: _counter.TokenCounter, delta: int) -> None:
        real_busy(self, delta)
        seen.append(self._active)

    async def agent(send: MemoryByteSend, receive: MemoryByteReceive, backend: Backend) -> None:
        pending: list[bytes] = []
        await send.send(INITIALIZE)
        await read_message(receive, pending)
        await send.send(call(1, "slow", text="x"))
        while not [m for m in backend.received if m.get("method") == "tools/call"]:
            await anyio.sleep(0.01)
        assert seen and seen[-1] == 1  # busy while the backend works on it
        backend.release.set()
        assert _text(await read_message(receive, pending)) == "x"
        assert seen[-1] == 0
        await send.send(call(2, "hang"))  # ends by the timeout: busy until then, idle after
        assert (await read_message(receive, pending))["error"]["code"] == TIMEOUT
        assert seen[-1] == 0

    monkeypatch.setattr(_counter.TokenCounter, "busy", busy)
    await run_relay(agent, timeout=0.5)
    assert seen[-1] == 0 and min(seen) >= 0
