"""``mcpsq``: a ``mcpsqueeze serve`` session's tools as shell commands (``mcpsq``, ``mcpsq SERVER --help``,
``mcpsq SERVER TOOL [--flag value ...]``, ``mcpsq SERVER TOOL --help``, ``mcpsq recover ID|PATH``). Exit
codes: 0 ok, 1 tool error, 2 usage, 3 session unreachable, 4 backend failure. It runs once per command: the
standard library and small stdlib-only modules of ours only.
"""

from __future__ import annotations

import os
import sys

from mcpsqueeze._errors import BackendError, MCPSqueezeError, UsageError, exit_code

from ._core import Printout, command
from ._session_http import (
    DEFAULT_CALL_TIMEOUT,
    SessionClient,
    default_recovery_dir,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import NoReturn

__all__ = ["console", "run"]


def _timeout(environ: Mapping[str, str]) -> float:
    text = environ.get("MCPSQUEEZE_TIMEOUT", "")
    if not text:
        return DEFAULT_CALL_TIMEOUT
    try:
        value = float(text)
    except ValueError:
        raise UsageError(
            f"MCPSQUEEZE_TIMEOUT={text!r} is not a number of seconds; set it like MCPSQUEEZE_TIMEOUT=120."
        ) from None
    if not value > 0:
        raise UsageError(f"MCPSQUEEZE_TIMEOUT={text!r} must be more than 0 seconds.")
    return value


def run(
    argv: list[str],
    environ: Mapping[str, str] | None = None,
    *,
    prefix: str = "mcpsq ",
    read_stdin: Callable[[], str] | None = None,
    client: SessionClient | None = None,
) -> Printout:
    """Everything ``mcpsq`` does but printing: argv in, (stdout, stderr, exit code) out; ``prefix``: ``"mcpsq
    "``, or ``""`` for an entry point (``argv[0]`` its server). The command's requests are made here,
    blocking; the session is found only when one is asked."""
    env: Mapping[str, str] = os.environ if environ is None else environ
    flow = command(
        argv,
        prefix=prefix,
        read_stdin=read_stdin,
        recovery_dir=env.get("MCPSQUEEZE_RECOVERY_DIR") or None,
        default_dir=default_recovery_dir(env),
    )
    try:
        method, path, body, timeout = next(flow)
        while True:
            try:
                client = client or SessionClient.from_environ(env)
                answer = client.request(method, path, body, timeout=timeout or _timeout(env))
            except MCPSqueezeError as exc:
                method, path, body, timeout = flow.throw(exc)
            else:
                method, path, body, timeout = flow.send(answer)
    except StopIteration as done:
        return done.value  # type: ignore[no-any-return]
    except (BackendError, UsageError) as exc:
        return Printout(stderr=f"mcpsq: {exc}\n", code=exit_code(exc))


def _write(stream: object, text: str) -> None:
    if not text:
        return
    buffer = getattr(stream, "buffer", None)
    if buffer is not None:
        try:
            data = text.encode("utf-8", "surrogateescape")  # bytes read as surrogateescape go out as read
        except UnicodeEncodeError:  # a lone surrogate (JSON may escape one): no UTF-8 for it, so \ud800
            data = text.encode("utf-8", "backslashreplace")
        buffer.write(data)
        buffer.flush()
    else:
        stream.write(text)  # type: ignore[attr-defined]
        stream.flush()  # type: ignore[attr-defined]


def console(argv: list[str] | None = None, prefix: str = "mcpsq ") -> NoReturn:
    """The ``mcpsq`` script (and, with ``prefix=""``, the installed per-server commands): run, print, and
    leave at once.

    Everything is written and flushed by then, and the shim registers no atexit hooks, so the
    interpreter's orderly shutdown (tearing down every module and object, ~2 ms of a ~15 ms command
    here) does nothing anyone could see; ``os._exit`` skips it.
    """
    outcome = run(sys.argv[1:] if argv is None else argv, prefix=prefix, read_stdin=sys.stdin.read)
    text = outcome.stdout
    if text and not text.endswith("\n") and sys.stdout.isatty():
        text += "\n"  # the data is exact in a pipe or a file; on a terminal the prompt starts its own line
    try:
        _write(sys.stdout, text)
    except BrokenPipeError:
        # The reader (head, grep -q) went away: that is not an error of ours. Silence the final flush.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    _write(sys.stderr, outcome.stderr)
    for stream in (sys.stdout, sys.stderr):
        try:  # noqa: SIM105 - contextlib (and the functools, collections it imports) is too slow here
            stream.flush()
        except (OSError, ValueError):
            pass  # a closed or broken stream: nothing more can be said on it anyway
    os._exit(outcome.code)


if __name__ == "__main__":
    console()
