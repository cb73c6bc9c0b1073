"""Start the backend server before the proxy has finished starting itself.

A proxy's start-up is the agent's wait for the first `initialize` answer. Most of ours is importing the
relay, the stages and anyio (~0.1 s), and most of the backend's is its own interpreter starting (Node:
~0.3 s). Spawning the backend first, right after the command line is parsed, lets the two overlap; the
relay then adopts the running process (`take`) instead of spawning another. Stdlib only: this runs before
anything else is imported.
"""

from __future__ import annotations

import contextlib
import subprocess
from collections.abc import Sequence

__all__ = ["discard", "prestart", "take"]

_started: dict[tuple[str, ...], subprocess.Popen[bytes]] = {}


def prestart(argv: Sequence[str]) -> None:
    """Spawn `argv` as the backend now; a command that cannot start is left for the relay to report."""
    with contextlib.suppress(OSError):  # the same spawn fails again in the relay, which explains it
        _started[tuple(argv)] = subprocess.Popen(
            list(argv),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=None,
            start_new_session=True,
            bufsize=0,
        )


def take(argv: Sequence[str]) -> subprocess.Popen[bytes] | None:
    """The process `prestart` spawned for exactly this `argv`, once; None if there is none."""
    return _started.pop(tuple(argv), None)


def discard() -> None:
    """Stop every backend `prestart` spawned that the relay never adopted (the proxy did not get that far)."""
    while _started:
        _, proc = _started.popitem()
        with contextlib.suppress(OSError):
            proc.kill()
        proc.wait()
