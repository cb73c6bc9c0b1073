"""Faults around the real `mcpsqueeze wrap` CLI, each made to happen for real: backends missing, killed,
hung, dead at start or speaking garbage, and agents leaving mid-call. Nothing is lost, every request gets
an answer or a clear error, the stdout stream stays valid JSON-RPC, the exit code says what happened, and
no zombie processes or file descriptors are left behind. What the session answers to malformed messages
and odd wire details runs the same wrap in this process (memwrap)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from jsonrpc_check import check_jsonrpc

from memwrap import MemoryWrap
from rawclient import PROTOCOL, RawClient, cli, demo_server, text, wait_for

NOISY = Path(__file__).parents[1] / "fixtures" / "noisy_backend.py"


BACKEND_GONE = -32000


TIMEOUT = -32001


UNREADABLE = -32002


INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": PROTOCOL, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
}


def _wrap(tmp_path: Path, *args: str) -> list[str]:
    return cli("wrap", "--recovery-dir", str(tmp_path / "rec"), *args)


def _children(pid: int) -> list[int]:
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        found += [int(c) for c in (task / "children").read_text().split()]
    return found


def _state(pid: int) -> str | None:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(") ", 1)[1][0]
    except (FileNotFoundError, ProcessLookupError):
        return None


def _fds(pid: int, recovery: Path | None = None) -> int:
    """Open descriptors; with `recovery`, those not on its files (a stored original's descriptor stays
    open until its batched fsync, within a second: `_recovery_fds` checks those close)."""
    fds = os.listdir(f"/proc/{pid}/fd")
    if recovery is None:
        return len(fds)
    return sum(1 for fd in fds if not _on(pid, fd, recovery))


def _on(pid: int, fd: str, directory: Path) -> bool:
    try:
        return os.readlink(f"/proc/{pid}/fd/{fd}").startswith(str(directory))
    except FileNotFoundError:  # closed while listed
        return False


def _settled_fds(pid: int, recovery: Path, deadline: float = 10.0) -> int:
    """`_fds` once it holds still for 0.25 s: a helper being spawned holds a pipe pair for a moment
    (under load that moment was caught once: 12 open, then 10)."""
    end = time.monotonic() + deadline
    last, since = _fds(pid, recovery), time.monotonic()
    while time.monotonic() < end:
        time.sleep(0.05)
        now = _fds(pid, recovery)
        if now != last:
            last, since = now, time.monotonic()
        elif time.monotonic() - since >= 0.25:
            break
    return last


def _recovery_fds(pid: int, recovery: Path, deadline: float = 10.0) -> int:
    """Descriptors on recovery files once the batched fsync had its time (polled, not slept)."""
    end = time.monotonic() + deadline
    while True:
        left = sum(1 for fd in os.listdir(f"/proc/{pid}/fd") if _on(pid, fd, recovery))
        if left == 0 or time.monotonic() > end:
            return left
        time.sleep(0.05)


def _lines(stdout: bytes) -> list[dict[str, Any]]:
    return [check_jsonrpc(raw) for raw in stdout.splitlines() if raw.strip()]


def test_closing_stdin_right_after_initialize_still_delivers_the_reply(tmp_path: Path) -> None:
    """`printf '<initialize>\\n' | mcpsqueeze wrap -- server` answers before exiting."""
    done = subprocess.run(
        _wrap(tmp_path, "--", sys.executable, str(NOISY)),
        input=json.dumps(INITIALIZE).encode() + b"\n",
        capture_output=True,
        timeout=60,
    )
    messages = _lines(done.stdout)
    assert [m["id"] for m in messages] == [1]
    assert messages[0]["result"]["serverInfo"]["name"] == "noisy"
    assert done.returncode == 0


def test_closing_stdin_with_a_call_to_a_hung_backend_pending_answers_it_within_the_timeout(
    tmp_path: Path,
) -> None:
    hung = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "hang", "arguments": {}}}
    script = json.dumps(INITIALIZE) + "\n" + json.dumps(hung) + "\n"
    done = subprocess.run(
        _wrap(tmp_path, "--timeout", "3", "--", sys.executable, str(NOISY)),
        input=script.encode(),
        capture_output=True,
        timeout=60,
    )
    by_id = {m["id"]: m for m in _lines(done.stdout)}
    assert set(by_id) == {1, 2}
    assert by_id[2]["error"]["code"] == TIMEOUT and "(hang)" in by_id[2]["error"]["message"]


def test_a_backend_dying_before_the_agents_first_message_answers_the_later_initialize(tmp_path: Path) -> None:
    argv = _wrap(tmp_path, "--", sys.executable, "-c", "import sys; sys.exit(4)")
    with RawClient(argv) as client:
        wait_for(lambda: "before answering anything" in client.stderr, 30, "the backend to die")
        response = client.request(
            "initialize", {"protocolVersion": PROTOCOL, "capabilities": {}, "clientInfo": {"name": "t"}}
        )
        code = client.proc.wait(30)
    assert response["error"]["code"] == BACKEND_GONE
    assert "exited with code 4" in response["error"]["message"]
    assert code == 3


def test_an_unparseable_backend_reply_is_answered_with_an_error_naming_the_cause_without_timeout(
    tmp_path: Path,
) -> None:
    with RawClient(_wrap(tmp_path, "--", sys.executable, str(NOISY))) as client:
        client.initialize()
        deep = client.request("tools/call", {"name": "deep", "arguments": {}})
        after = client.call("echo", {"text": "still serving"})
    assert deep["error"]["code"] == UNREADABLE
    assert "could not be read" in deep["error"]["message"] and "nested deeper" in deep["error"]["message"]
    assert text(after) == "still serving"


def test_a_backend_line_with_a_nan_id_is_never_forwarded_and_stdout_stays_valid_json(tmp_path: Path) -> None:
    calls = [
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "nan", "arguments": {}}},
        {
            "jsonrpc": "2.0",
            "id": 3,
            "method": "tools/call",
            "params": {"name": "echo", "arguments": {"text": "x"}},
        },
    ]
    script = "".join(json.dumps(m) + "\n" for m in [INITIALIZE, *calls])
    done = subprocess.run(
        _wrap(tmp_path, "--", sys.executable, str(NOISY)),
        input=script.encode(),
        capture_output=True,
        timeout=60,
    )
    by_id = {m["id"]: m for m in _lines(done.stdout)}  # strict: a NaN anywhere fails here
    assert set(by_id) == {1, 2, 3}
    assert text(by_id[2]["result"]) == "after nan" and text(by_id[3]["result"]) == "x"


def test_a_backend_killed_mid_call_answers_the_call_leaves_no_zombie_and_exits_3(tmp_path: Path) -> None:
    with RawClient(_wrap(tmp_path, "--", sys.executable, str(NOISY))) as client:
        client.initialize()
        (backend,) = _children(client.proc.pid)
        client.send(
            {"jsonrpc": "2.0", "id": 50, "method": "tools/call", "params": {"name": "hang", "arguments": {}}}
        )
        os.kill(backend, signal.SIGKILL)
        answer = client.wait_response(50)
        wait_for(lambda: _state(backend) is None, 10, "the killed backend to be reaped")
        code = client.close()
    assert answer["error"]["code"] == BACKEND_GONE and "killed by SIGKILL" in answer["error"]["message"]
    assert code == 3


def test_an_agent_leaving_mid_call_ends_the_proxy_and_its_backend(tmp_path: Path) -> None:
    with RawClient(_wrap(tmp_path, "--timeout", "2", "--", sys.executable, str(NOISY))) as client:
        client.initialize()
        (backend,) = _children(client.proc.pid)
        client.send(
            {"jsonrpc": "2.0", "id": 60, "method": "tools/call", "params": {"name": "hang", "arguments": {}}}
        )
        code = client.close(timeout=30)  # stdin closes with the call in flight
        answer = client.wait_response(60)
    assert answer["error"]["code"] == TIMEOUT
    assert code == 0
    wait_for(lambda: _state(backend) is None, 10, "the backend to end with the proxy")


def test_garbage_deep_and_unknown_id_replies_leak_no_file_descriptors(tmp_path: Path) -> None:
    with RawClient(_wrap(tmp_path, "--", sys.executable, str(NOISY))) as client:
        client.initialize()
        before = 0
        for i in range(6):
            if i == 1:  # after one round: lazily opened files are open by now
                before = _settled_fds(client.proc.pid, tmp_path / "rec")
            assert "error" in client.request("tools/call", {"name": "deep", "arguments": {}})
            assert text(client.call("nan")) == "after nan"
            shrunk = client.call("echo", {"text": f"{i} " + "x" * 30_000})  # stored to a recovery file
            assert f"\n{i} xxx" in text(shrunk) and "truncation" in shrunk["_meta"]
        after = _settled_fds(client.proc.pid, tmp_path / "rec")
        assert _recovery_fds(client.proc.pid, tmp_path / "rec") == 0
    assert after <= before  # five more rounds of garbage, deep and unknown-id replies opened nothing


# -- failures made to happen for real


def test_a_missing_backend_command_exits_3_with_a_clear_message_before_serving(tmp_path: Path) -> None:
    done = subprocess.run(
        _wrap(tmp_path, "--", "no-such-mcp-server-binary", "--flag"),
        capture_output=True,
        text=True,
        timeout=30,
        stdin=subprocess.PIPE,
    )
    assert done.returncode == 3
    assert "'no-such-mcp-server-binary' was not found" in done.stderr
    assert done.stdout == ""


def test_a_backend_failing_at_start_exits_non_zero_without_the_agent_doing_anything(tmp_path: Path) -> None:
    argv = _wrap(
        tmp_path, "--", sys.executable, "-c", "import sys; print('bad config', file=sys.stderr); sys.exit(2)"
    )
    proc = subprocess.Popen(
        argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        code = proc.wait(timeout=30)  # stdin stays open: the agent has not done anything
        err = proc.stderr.read() if proc.stderr else ""
    finally:
        proc.kill()
    assert code == 3
    assert "exited with code 2 before answering anything" in err
    assert "bad config" in err  # the backend's own stderr reaches the user


def test_a_backend_failing_at_start_answers_the_pending_initialize_with_an_error(tmp_path: Path) -> None:
    argv = _wrap(tmp_path, "--", sys.executable, "-c", "import sys, time; sys.stdin.readline(); sys.exit(5)")
    with RawClient(argv) as client:
        response = client.request(
            "initialize", {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t"}}
        )
        code = client.proc.wait(20)
    assert response["error"]["code"] == BACKEND_GONE
    assert "exited with code 5" in response["error"]["message"]
    assert code == 3


def test_a_backend_dying_mid_session_fails_pending_and_later_calls_then_exits_non_zero(
    tmp_path: Path,
) -> None:
    with RawClient(_wrap(tmp_path, "--", *demo_server())) as client:
        client.initialize()
        assert text(client.call("echo", {"text": "alive"})) == "alive"
        crashed = client.request("tools/call", {"name": "crash", "arguments": {}})
        later = client.request("tools/call", {"name": "echo", "arguments": {"text": "again"}})
        code = client.close()
    assert crashed["error"]["code"] == BACKEND_GONE
    assert "exited with code 3" in crashed["error"]["message"]
    assert later["error"]["code"] == BACKEND_GONE
    assert "not running" in later["error"]["message"]
    assert code == 3
    assert "mcpsqueeze session summary:" in client.stderr


# The demo server, signalling through a file once its imports are done. `--timeout` covers every request,
# initialize too, and on a loaded machine the imports alone can take longer than the test's short timeout.
_READY_DEMO = (
    "import pathlib, sys; import mcp.server.stdio; from mcpsqueeze.demo import server; "
    "pathlib.Path(sys.argv[1]).touch(); server.main([])"
)


def test_a_hanging_call_times_out_and_the_proxy_keeps_working(tmp_path: Path) -> None:
    ready = tmp_path / "backend-ready"
    argv = _wrap(tmp_path, "--timeout", "4", "--", sys.executable, "-c", _READY_DEMO, str(ready))
    with RawClient(argv) as client:
        wait_for(ready.exists, timeout=60, what="the demo server to finish its imports")
        client.initialize()
        started = time.monotonic()
        hung = client.request("tools/call", {"name": "sleep", "arguments": {"seconds": 60}})
        waited = time.monotonic() - started
        after = client.call("echo", {"text": "still here"})
    assert hung["error"]["code"] == TIMEOUT
    assert "within 4 s" in hung["error"]["message"] and "(sleep)" in hung["error"]["message"]
    assert 4 <= waited < 30  # the proxy's deadline, not the tool's 60 s
    assert text(after) == "still here"


def test_malformed_messages_from_the_agent_get_protocol_errors_not_a_crash(tmp_path: Path) -> None:
    with MemoryWrap(["--recovery-dir", str(tmp_path / "rec")]) as client:
        client.initialize()
        client.send(b"{this is not json")
        assert client.wait_response(None)["error"]["code"] == -32700
        client.send(b"[1, 2, 3]")
        assert client.wait_response(None)["error"]["code"] == -32600
        client.send(b"\xff\xfe invalid utf-8")
        assert client.wait_response(None)["error"]["code"] == -32700
        client.send(b'{"jsonrpc": "1.0", "id": 77, "method": "ping"}')
        wrong_version = client.wait_response(77)
        assert wrong_version["error"]["code"] == -32600
        assert text(client.call("echo", {"text": "fine"})) == "fine"


def test_malformed_output_from_the_backend_is_answered_and_survived(tmp_path: Path) -> None:
    backend = Path(__file__).parents[1] / "fixtures" / "noisy_backend.py"
    with MemoryWrap(
        ["--recovery-dir", str(tmp_path / "rec")], target=[sys.executable, str(backend)]
    ) as client:
        client.initialize()
        result = client.call("echo", {"text": "after garbage"})
    assert text(result) == "after garbage"
    assert "malformed message from the backend" in client.stderr


def test_wire_details_pass_through_untouched(tmp_path: Path) -> None:
    """Unknown fields, explicit nulls and integers beyond 64 bits survive the relay exactly."""
    backend = Path(__file__).parents[1] / "fixtures" / "noisy_backend.py"
    with MemoryWrap(
        ["--recovery-dir", str(tmp_path / "rec")], target=[sys.executable, str(backend)]
    ) as client:
        client.initialize()
        result = client.call("odd", {})
    assert result["x-unknown"] == {"nested": None}
    assert result["big"] == 123456789012345678901234567890
    assert result["_meta"] == {"vendor/flag": True}


def test_lone_surrogates_pass_through_and_their_originals_recover(tmp_path: Path) -> None:
    """JSON allows a lone surrogate escape; the relay must carry it and recovery must read it back."""
    backend = Path(__file__).parents[1] / "fixtures" / "noisy_backend.py"
    target = [sys.executable, str(backend), "--with-squeeze-recover"]
    with MemoryWrap(["--recovery-dir", str(tmp_path / "rec")], target=target) as client:
        client.initialize()
        client.result("tools/list")  # the backend owns squeeze_recover: ours becomes squeeze_recover_2
        small = client.call("surrogate", {})
        big = client.call("surrogate", {"repeat": 6000})
        recovered = client.call(
            "squeeze_recover_2", {"response_id": big["_meta"]["truncation"]["response_id"]}
        )
    assert text(small) == "a\ud800b "
    assert len(text(big)) <= 20_000
    assert recovered.get("isError") is not True
    assert text(recovered) == "a\ud800b " * 6000
