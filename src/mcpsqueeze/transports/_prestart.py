"""Start the backend server before the proxy has finished starting itself.

A proxy's start-up is the agent's wait for the first `initialize` answer. Most of ours is importing the
relay, the stages and anyio (~0.1 s), and most of the backend's is its own interpreter starting (Node:
~0.3 s). Spawning the backend first, right after the command line is parsed, lets the two overlap; the
relay then adopts the running process (`take`) instead of spawning another. Stdlib only: this runs before
anything else is imported.
"""

from __future__ import annotations

import atexit
import contextlib
import subprocess
from collections.abc import Sequence

__all__ = ["discard", "early_command", "prestart", "prestart_from_command_line", "started", "take"]

_started: dict[tuple[str, ...], subprocess.Popen[bytes]] = {}


def prestart_from_command_line(args: Sequence[str]) -> None:
    """Our argv after the program name: for `wrap [OPTIONS] -- COMMAND [ARGS...]`, spawn COMMAND at once,
    before the command line parser is even imported (~50 ms sooner than `wrap` itself could). `wrap`
    adopts the process when its own parse gives the same command (its `prestart` is then a no-op); one
    it does not adopt (a usage error, a different parse) is stopped at exit."""
    command = early_command(args)
    if command is not None:
        atexit.register(discard)
        prestart(command)


def early_command(args: Sequence[str]) -> list[str] | None:
    """The backend command of `wrap [OPTIONS] -- COMMAND...` over stdio, read the way the parser reads it;
    None for any other shape (no `--`, a URL, help, another transport): `wrap` starts those itself."""
    if not args or args[0] != "wrap" or "--" not in args:
        return None
    split = args.index("--")
    options, command = args[1:split], list(args[split + 1 :])
    if not command or (len(command) == 1 and command[0].startswith(("http://", "https://"))):
        return None
    for i, option in enumerate(options):
        if option in ("-h", "--help"):
            return None
        if option == "--transport" and options[i + 1 : i + 2] != ["stdio"]:
            return None
        if option.startswith("--transport=") and option != "--transport=stdio":
            return None
    return command


def prestart(argv: Sequence[str]) -> None:
    """Spawn `argv` as the backend now; a command that cannot start is left for the relay to report."""
    if tuple(argv) in _started:
        return  # started from the command line already
    with contextlib.suppress(OSError):  # the same spawn fails again in the relay, which explains it
        _started[tuple(argv)] = subprocess.Popen(
            list(argv),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=None,
            start_new_session=True,
            bufsize=0,
        )


def started(argv: Sequence[str]) -> subprocess.Popen[bytes] | None:
    """The process `prestart` spawned for exactly this `argv`, still there for `take`; None if none."""
    return _started.get(tuple(argv))


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
