"""Fuzzing the real relay from both sides: generated JSON-RPC sessions, in-process.

The agent side sends odd ids (duplicate, reused, invalid), deep and huge lines, invalid UTF-8, NaN and
Infinity, cancellations and storms of notifications; through the `raw` and other scripted tools the backend
answers with garbage, deep or NaN replies, made-up ids, double answers, notification storms and death.
Invariants: the relay never crashes, every line it writes (to either side) is valid JSON-RPC, and every
request is answered exactly once, with its own answer (or an error naming the cause).

MCPSQUEEZE_FUZZ_EXAMPLES raises the example count for a campaign (default 40, about 15 s here).
"""

from __future__ import annotations

import json
import os
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import anyio
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonrpc_check import check_jsonrpc, valid_id
from relay_harness import INITIALIZE, Run, deep, run_relay

EXAMPLES = int(os.environ.get("MCPSQUEEZE_FUZZ_EXAMPLES", "40"))
TOTALS: Counter[str] = Counter()

VALID_IDS = st.one_of(
    st.integers(-2, 6), st.sampled_from(["a", "1", "", "ü\U0001f600", "x" * 300]), st.sampled_from([1.5, 2.0])
)
INVALID_IDS = st.sampled_from([[1], {"a": 1}, [], {}, True, False, None, [[1]]])
TOKENS = st.one_of(VALID_IDS, INVALID_IDS)
GARBAGE = st.one_of(
    st.binary(max_size=300).filter(lambda b: b"\n" not in b and b"{" not in b),
    st.sampled_from(
        [
            b"NaN",
            b"[1e400]",
            b'"\xed\xa0\x80"',
            b"\xff\xfe\xfd",
            b"[" * 5000,
            b"z" * 300_000,
            b"\x00",
            b"1",
            b"[]",
        ]
    ),
)
TOOLS = ["echo", "garbage", "deep", "nan", "wrong_id", "twice", "storm", "big", "ask", "hang", "die", "raw"]
BACKEND_LINES = st.one_of(
    GARBAGE,
    TOKENS.map(
        lambda t: json.dumps(
            {
                "jsonrpc": "2.0",
                "method": "notifications/progress",
                "params": {"progressToken": t, "progress": 1},
            }
        ).encode()
    ),
    INVALID_IDS.map(lambda i: json.dumps({"jsonrpc": "2.0", "id": i, "method": "roots/list"}).encode()),
    st.just(b'{"jsonrpc":"2.0","id":"srv-1","method":"roots/list"}'),
    st.just(b'{"jsonrpc":"2.0","method":"notifications/message","params":{"data":NaN}}'),
    st.sampled_from([300, 1100, 20_000]).map(
        lambda d: b'{"jsonrpc":"2.0","method":"notifications/message","params":' + deep(d).encode() + b"}"
    ),
)


def _key(value: Any) -> tuple[str, str]:
    return (type(value).__name__, json.dumps(value))


@dataclass
class Script:
    lines: list[bytes] = field(default_factory=lambda: [INITIALIZE])
    requests: list[tuple[tuple[str, str], str, str]] = field(default_factory=list)  # key, marker, tool
    null_errors: int = 0
    cancelled: set[tuple[str, str]] = field(default_factory=set)


@st.composite
def scripts(draw: st.DrawFn) -> Script:
    script = Script()
    script.requests.append((_key(0), "init", "initialize"))
    for n in range(draw(st.integers(1, 14))):
        kind = draw(
            st.sampled_from(
                ["call"] * 6
                + ["bad_id", "garbage", "deep_request", "nan_request", "notify", "storm", "reply"]
            )
        )
        marker = f"m{n}."  # prefix-free: a shrunk text is matched by its head
        if kind == "call":
            request_id = draw(VALID_IDS)
            tool = draw(st.sampled_from(TOOLS))
            arguments: dict[str, Any] = {"text": marker}
            if tool == "deep":
                arguments["depth"] = draw(st.sampled_from([5, 300, 1000, 1100, 10_000]))
            elif tool == "storm":
                arguments["n"] = draw(st.integers(1, 300))
            elif tool == "big":
                arguments["size"] = draw(st.sampled_from([100, 30_000, 1_200_000]))
            elif tool == "raw":
                arguments["lines"] = [b.hex() for b in draw(st.lists(BACKEND_LINES, max_size=4))]
            params: dict[str, Any] = {"name": tool, "arguments": arguments}
            if draw(st.booleans()):
                params["_meta"] = {"progressToken": draw(TOKENS)}
            script.lines.append(
                _line({"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params})
            )
            script.requests.append((_key(request_id), marker, tool))
        elif kind == "bad_id":
            script.lines.append(_line({"jsonrpc": "2.0", "id": draw(INVALID_IDS), "method": "ping"}))
            script.null_errors += 1
        elif kind == "garbage":
            raw = draw(GARBAGE)
            script.lines.append(raw + b"\n")
            script.null_errors += bool(raw.strip())
        elif kind in ("deep_request", "nan_request"):
            request_id = draw(VALID_IDS)
            body = (
                deep(draw(st.sampled_from([300, 1000, 1100, 10_000])))
                if kind == "deep_request"
                else '{"x":NaN}'
            )
            script.lines.append(
                b'{"jsonrpc":"2.0","id":'
                + json.dumps(request_id).encode()
                + b',"method":"ping","params":'
                + body.encode()
                + b"}\n"
            )
            script.requests.append((_key(request_id), marker, "ping"))
        elif kind == "notify":
            target = draw(TOKENS)
            script.lines.append(
                _line(
                    {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": target}}
                )
            )
            if valid_id(target):
                script.cancelled.add(_key(target))
        elif kind == "storm":
            script.lines += [_line({"jsonrpc": "2.0", "method": "notifications/initialized"})] * draw(
                st.integers(10, 500)
            )
        else:  # the agent answering a request the backend never made
            reply_id = draw(TOKENS)
            script.lines.append(_line({"jsonrpc": "2.0", "id": reply_id, "result": {}}))
            script.null_errors += not (valid_id(reply_id) or reply_id is None)
    return script


def _line(message: dict[str, Any]) -> bytes:
    return json.dumps(message).encode() + b"\n"


def _text(message: dict[str, Any]) -> str | None:
    result = message.get("result")
    if not isinstance(result, dict) or not isinstance(result.get("content"), list):
        return None
    return "".join(b.get("text", "") for b in result["content"] if isinstance(b, dict))


def _own_answer(tool: str, marker: str, message: dict[str, Any]) -> bool:
    if "error" in message:
        return True  # an error with the request's id (timeout, backend gone, unreadable reply) answers it
    text = _text(message)
    if tool in ("initialize", "ping"):
        return isinstance(message["result"], dict)
    if tool == "big":
        return text is not None and (
            text.startswith(marker) or "truncation" in message["result"].get("_meta", {})
        )
    if tool == "deep":
        return isinstance(message["result"], list)
    return text == marker


def _check(script: Script, run: Run) -> None:
    for raw in run.backend.lines_in:
        check_jsonrpc(raw)  # what the relay wrote to the backend is valid JSON-RPC too
    responses = run.responses()  # (checks every line written to the agent)
    assert sum(1 for r in responses if r["id"] is None) == script.null_errors
    unmatched = [r for r in responses if r["id"] is not None]
    lost: list[tuple[Any, ...]] = []
    for key, marker, tool in script.requests:
        mine = [
            r for r in unmatched if _key(r["id"]) == key and "result" in r and _own_answer(tool, marker, r)
        ]
        mine = mine or [r for r in unmatched if _key(r["id"]) == key and "error" in r]
        if mine:
            unmatched.remove(mine[0])
        elif key not in script.cancelled:
            lost.append((key, marker, tool))
    assert not lost, (
        f"requests never answered: {lost}; answers: {[(r['id'], str(r.get('result') or r.get('error'))[:90]) for r in responses]}"
    )
    assert not unmatched, f"answers to no request (or to the wrong one): {unmatched[:3]}"
    TOTALS["examples"] += 1
    TOTALS["requests"] += len(script.requests)
    TOTALS["lines"] += len(script.lines)
    TOTALS["answered"] += len(script.requests) - len(lost)


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    derandomize=os.environ.get("MCPSQUEEZE_FUZZ_RANDOM") != "1",
)
@given(script=scripts(), timeout=st.sampled_from([None, None, 0.3]))
def _generated_session(script: Script, timeout: float | None) -> None:
    run = anyio.run(lambda: run_relay(script.lines, timeout=timeout, drain_grace=0.3, budget=4000))
    _check(script, run)


def test_generated_sessions_from_both_sides_never_crash_and_answer_every_request_once() -> None:
    """Every generated session checked; then the figures (tried / survived / lost) for the
    report, printed here (a separate test printing them had to run last)."""
    TOTALS.clear()
    _generated_session()
    print(
        f"\nfuzz: {TOTALS['examples']} sessions, {TOTALS['lines']} agent lines, {TOTALS['requests']} requests, "
        f"{TOTALS['answered']} answered, {TOTALS['requests'] - TOTALS['answered']} lost"
    )
