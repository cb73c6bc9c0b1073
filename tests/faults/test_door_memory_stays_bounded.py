"""A door's own memory stays bounded, measured on a real process: every HTTP door refuses a request body
over `--max-body` (default 16 MiB) with 413 and a message naming the knob, and holds none of it (a 400 MB
body, announced or chunked, leaves the door's memory flat: wrap's streamable HTTP, both protocol paths,
and serve's HTTP API); a spawned wrap's peak for grep and search of a deep long-keyed original stays within
three times its size; and a huge JSON-RPC line is parsed holding the line and its text, not three copies
(orjson copies its input first), with exactly the result the ordinary parse gives. (What one recovery may
cost in this process: test_recover_costs.py.)"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from http_doors import Door, head, read_response, serve_door, wrap_door
from treemem import PeakSampler, rss

from hostile_inputs import long_keys_nested_deep
from mcpsqueeze._jsonbytes import loads
from rawclient import RawClient, cli, demo_server

MB = 1 << 20
# The door may hold up to --max-body (16 MiB) of a chunked body before it knows it is too big, and its app
# joins what it read once: flat means a bound of a few times that, whatever the body's size (before the
# limit, 400 MB took wrap from 70 to ~870 MB).
FLAT = 64 * MB
INITIALIZE = json.dumps(
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t"}},
    }
).encode()


def _warm(door: Door, body: bytes = INITIALIZE, stateless: bool = False) -> bytes:
    """One ordinary request first: what a door imports and starts on its first request is not growth."""
    with socket.create_connection((door.host, door.port)) as sock:
        sock.sendall(head(door, length=len(body), stateless=stateless) + body)
        return read_response(sock)


def _send_body(door: Door, total: int, *, announce: bool, stateless: bool = False) -> tuple[bytes, int]:
    """POST `total` bytes of body (a Content-Length, or chunked), 1 MiB at a time, while the door's RSS
    is sampled (the door's own process: a session's backend is not the door); (the response, the door's
    peak RSS growth in bytes)."""
    _warm(door, stateless=stateless)
    idle = rss(door.pid)
    answer: list[bytes] = []
    with (
        socket.create_connection((door.host, door.port)) as sock,
        PeakSampler(door.pid, tree=False) as sampler,
    ):
        sock.sendall(
            head(door, length=total if announce else None, chunked=not announce, stateless=stateless)
        )
        reader = threading.Thread(target=lambda: answer.append(read_response(sock, 60)))
        reader.start()
        piece = b"x" * MB
        frame = f"{MB:x}\r\n".encode() + piece + b"\r\n"
        try:
            for _ in range(total // MB):
                sock.sendall(piece if announce else frame)
                if answer:
                    break
        except OSError:
            pass  # the door closed the connection after refusing
        reader.join(60)
    return (answer[0] if answer else b""), sampler.peak - idle


def _status(response: bytes) -> int:
    return int(response.split(b" ", 2)[1]) if response.startswith(b"HTTP/1.1 ") else 0


def _body(response: bytes) -> object:
    return json.loads(response.partition(b"\r\n\r\n")[2])


@pytest.mark.parametrize("stateless", [False, True], ids=["session", "stateless"])
@pytest.mark.parametrize("announce", [True, False], ids=["content-length", "chunked"])
def test_wrap_refuses_a_400_mb_body_with_413_and_stays_flat(
    tmp_path: Path, announce: bool, stateless: bool
) -> None:
    with wrap_door(tmp_path) as door:
        response, grown = _send_body(door, 400 * MB, announce=announce, stateless=stateless)
    assert _status(response) == 413, response[:300]
    body = _body(response)
    assert isinstance(body, dict) and "--max-body" in body["error"]["message"]
    assert grown < FLAT, f"wrap grew {grown / MB:.0f} MiB"


@pytest.mark.parametrize("announce", [True, False], ids=["content-length", "chunked"])
def test_serve_refuses_a_400_mb_body_with_413_and_stays_flat(tmp_path: Path, announce: bool) -> None:
    with serve_door(tmp_path) as door:
        response, grown = _send_body(door, 400 * MB, announce=announce)
    assert _status(response) == 413, response[:300]
    body = _body(response)
    assert isinstance(body, dict) and body["error"]["code"] == "too_large"
    assert "--max-body" in body["error"]["message"]
    assert grown < FLAT, f"serve grew {grown / MB:.0f} MiB"


def test_max_body_sets_the_bound_and_smaller_requests_still_work(tmp_path: Path) -> None:
    initialize = INITIALIZE
    with wrap_door(tmp_path, "--max-body", "1K") as door:
        with socket.create_connection((door.host, door.port)) as sock:
            sock.sendall(head(door, length=len(initialize)) + initialize)
            ok = read_response(sock)
        padded = initialize[:-1] + b', "pad": "' + b"p" * 2000 + b'"}'
        with socket.create_connection((door.host, door.port)) as sock:
            sock.sendall(head(door, length=len(padded)) + padded)
            refused = read_response(sock)
    assert _status(ok) == 200, ok[:300]
    assert _status(refused) == 413 and b"1024 bytes" in refused, refused[:300]


# -- recovering from a deep long-keyed original


def _proc_status(pid: int, field: str) -> int:
    """A /proc/PID/status figure in bytes (VmRSS: resident now; VmHWM: its peak since reset)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) * 1024
    raise AssertionError(f"no {field} for {pid}")


def test_wrap_greps_and_searches_a_deep_long_keyed_original_within_three_times_its_size(
    tmp_path: Path,
) -> None:
    """The spawned wrap's own resident memory: its peak (VmHWM, reset through clear_refs just before)
    above what it held just before, per request, after a warm-up of the same requests on a small one."""
    original = long_keys_nested_deep()
    asks = [{"grep": "word 1"}, {"search": "word"}]
    argv = cli("wrap", "--recovery-dir", str(tmp_path / "rec"), "--budget", "2000", "--", *demo_server())
    peaks = {}
    with RawClient(argv) as client:
        client.initialize()
        small = client.call("echo", {"text": long_keys_nested_deep(40, 100)})["_meta"]["truncation"]
        for ask in asks:
            client.call("squeeze_recover", {"response_id": small["response_id"], **ask})
        rid = client.call("echo", {"text": original}, timeout=60)["_meta"]["truncation"]["response_id"]
        pid = client.proc.pid
        for ask in asks:
            Path(f"/proc/{pid}/clear_refs").write_text("5")  # VmHWM := VmRSS
            idle = _proc_status(pid, "VmRSS")
            answer = client.call("squeeze_recover", {"response_id": rid, **ask}, timeout=60)
            peaks[json.dumps(ask)] = _proc_status(pid, "VmHWM") - idle
            assert "values match" in answer["content"][0]["text"]
        assert client.close() == 0
    assert all(peak <= 3 * len(original) for peak in peaks.values()), (len(original), peaks)


# -- a huge line


def _line(text: str, **extra: object) -> bytes:
    result = {"content": [{"type": "text", "text": text}], **extra}
    return json.dumps({"jsonrpc": "2.0", "id": 1, "result": result}).encode()


@pytest.mark.parametrize(
    "line",
    [
        _line("a" * (9 * MB), structuredContent={"rows": [1, "two", None, {"x": "y"}]}),
        _line("é中" * (3 * MB)),
        _line("b" * (9 * MB)).replace(b'"result"', b'"' + b"k" * (2 * MB) + b'": 1, "result"'),  # a big key
        _line('quoted " and \\ escaped ' * 400_000),
    ],
)
def test_a_huge_line_parses_exactly_as_the_ordinary_parse(line: bytes) -> None:
    assert loads(bytearray(line)) == json.loads(line)


def test_a_control_character_in_a_huge_string_is_refused_as_json_requires() -> None:
    line = _line("a" * (9 * MB)).replace(b"aaaa", b"a\x01aa", 1)
    with pytest.raises(ValueError):
        loads(line)


def test_parsing_a_100_mb_line_holds_the_line_and_its_text_only() -> None:
    script = (
        "import resource, sys; from mcpsqueeze._jsonbytes import loads\n"
        'line = bytearray(b\'{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"\')\n'
        "piece = b'a' * (1 << 20)\n"
        "for _ in range(100): line += piece\n"
        "line += b'\"}]}}'\n"
        "before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
        "value = loads(line)\n"
        "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before)\n"
    )
    grown_kib = int(subprocess.run([sys.executable, "-c", script], capture_output=True, check=True).stdout)
    assert grown_kib * 1024 <= 130 * MB, f"the parse added {grown_kib // 1024} MiB to a 100 MiB line"
