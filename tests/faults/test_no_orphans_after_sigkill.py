"""Issue 23 item 14: no process of ours outlives a SIGKILLed `wrap` by more than 2 s: the token counter's
helper (busy counting a big result when the proxy dies) and the backend both end."""

from __future__ import annotations

import os
import signal
import sys
import time
from pathlib import Path

from treemem import descendants

from rawclient import RawClient, cli, wait_for

BACKEND = Path(__file__).parents[1] / "fixtures" / "big_backend.py"


def _cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except FileNotFoundError:
        return b""


def _cpu_ticks(pid: int) -> int:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(") ", 1)[1].split()
    return int(fields[11]) + int(fields[12])  # utime + stime


def _alive(pid: int) -> bool:
    """Running or sleeping (a zombie waiting for its reaper is gone already)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(") ", 1)[1][0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state not in "ZX"


def test_23_14_the_counter_helper_and_the_backend_end_within_2_s_of_a_sigkilled_wrap(tmp_path: Path) -> None:
    argv = cli("wrap", "--recovery-dir", str(tmp_path / "rec"), "--", sys.executable, str(BACKEND))
    with RawClient(argv) as client:
        client.initialize()
        client.call("letters", {"mb": 30, "kind": "words"}, timeout=120)
        ours = descendants(client.proc.pid)
        helper = wait_for(
            lambda: next(
                (p for p in descendants(client.proc.pid) if b"accounting._counter" in _cmdline(p)), None
            ),
            30,
            "the counter helper",
        )
        start = _cpu_ticks(helper)
        wait_for(lambda: _cpu_ticks(helper) > start + 50, 60, "the helper to be busy counting")
        ours = sorted(set(ours) | set(descendants(client.proc.pid)))
        assert len(ours) >= 3, ours  # wrap, the helper, the backend
        os.kill(client.proc.pid, signal.SIGKILL)
        client.proc.wait(10)
        killed = time.monotonic()
        while time.monotonic() - killed < 2.0 and any(_alive(p) for p in ours):
            time.sleep(0.02)
        left = {p: _cmdline(p)[-80:] for p in ours if _alive(p)}
        for pid in left:  # never leave them behind, even when the test fails
            os.kill(pid, signal.SIGKILL)
        assert not left, f"still alive 2 s after wrap was killed: {left}"
