"""Failure behaviour of `mcpsqueeze wrap`: each case is made to happen for real."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

from rawclient import RawClient, cli, demo_server, text, wait_for

BACKEND_GONE = -32000
TIMEOUT = -32001


def _wrap(tmp_path: Path, *args: str) -> list[str]:
    return cli("wrap", "--recovery-dir", str(tmp_path / "rec"), *args)


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
    with RawClient(_wrap(tmp_path, "--", *demo_server())) as client:
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
    with RawClient(_wrap(tmp_path, "--", sys.executable, str(backend))) as client:
        client.initialize()
        result = client.call("echo", {"text": "after garbage"})
    assert text(result) == "after garbage"
    assert "malformed message from the backend" in client.stderr


def test_wire_details_pass_through_untouched(tmp_path: Path) -> None:
    """Unknown fields, explicit nulls and integers beyond 64 bits survive the relay exactly."""
    backend = Path(__file__).parents[1] / "fixtures" / "noisy_backend.py"
    with RawClient(_wrap(tmp_path, "--", sys.executable, str(backend))) as client:
        client.initialize()
        result = client.call("odd", {})
    assert result["x-unknown"] == {"nested": None}
    assert result["big"] == 123456789012345678901234567890
    assert result["_meta"] == {"vendor/flag": True}


def test_lone_surrogates_pass_through_and_their_originals_recover(tmp_path: Path) -> None:
    """JSON allows a lone surrogate escape; the relay must carry it and recovery must read it back."""
    backend = Path(__file__).parents[1] / "fixtures" / "noisy_backend.py"
    with RawClient(_wrap(tmp_path, "--", sys.executable, str(backend), "--with-squeeze-recover")) as client:
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
