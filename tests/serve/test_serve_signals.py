"""`mcpsqueeze serve` ends on SIGTERM within its grace period, even with a call to a hung backend in flight."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from rawclient import cli, serve_ready, wait_for

HUNG = Path(__file__).parents[1] / "fixtures" / "hung_backend.py"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    stat = Path(f"/proc/{pid}/stat")
    return not (stat.exists() and stat.read_text().split(") ")[-1].startswith("Z"))


def test_sigterm_ends_serve_within_the_grace_period_while_a_call_to_a_hung_backend_is_in_flight(
    tmp_path: Path,
) -> None:
    sock = tmp_path / "run" / "s.sock"
    marker = tmp_path / "called"
    argv = cli(
        "serve", "--recovery-dir", str(tmp_path / "rec"), "--socket", str(sock),
        "-n", "hung", "--", sys.executable, str(HUNG), str(marker),
    )  # fmt: skip
    serve = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    assert serve.stderr is not None
    serve_ready(serve)
    env = {**os.environ, "MCPSQUEEZE_SOCKET": str(sock)}
    shim = subprocess.Popen(
        [sys.executable, "-m", "mcpsqueeze.bash.shim", "hung", "hang"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        backend_pid = int(wait_for(lambda: marker.exists() and marker.read_text(), 30, "the call in flight"))
        started = time.monotonic()
        serve.send_signal(signal.SIGTERM)
        code = serve.wait(timeout=30)
        took = time.monotonic() - started
        err = serve.stderr.read()
        shim_code = shim.wait(timeout=30)
    finally:
        for proc in (serve, shim):
            if proc.poll() is None:
                proc.kill()
    print(f"serve exited {took:.2f} s after SIGTERM")
    assert code == 0
    # No tool call completed, so there is nothing to sum up (quiet when nothing was proxied).
    assert "mcpsqueeze session summary:" not in err
    assert shim_code in (3, 4)  # the call is refused or reported, never left hanging
    wait_for(lambda: not _alive(backend_pid), 10, "the hung backend to be gone")
