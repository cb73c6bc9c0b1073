"""``mcpsq``: a ``mcpsqueeze serve`` session's tools as shell commands (``mcpsq``, ``mcpsq SERVER --help``,
``mcpsq SERVER TOOL [--flag value ...]``, ``mcpsq SERVER TOOL --help``, ``mcpsq recover ID|PATH``). Exit
codes: 0 ok, 1 tool error, 2 usage, 3 session unreachable, 4 backend failure. It runs once per command: the
standard library and small stdlib-only modules of ours only.
"""

from __future__ import annotations

import os
import sys

from mcpsqueeze._errors import BackendError, MCPSqueezeError, UsageError, exit_code

from ._catalog import Catalog
from ._core import CallPlan, Printout, call_answer, is_recover, listing_of, plan, plan_recover, run_recover
from ._session_http import (
    DEFAULT_CALL_TIMEOUT,
    SessionClient,
    default_recovery_dir,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from pathlib import Path
    from typing import NoReturn

__all__ = ["console", "main", "run"]


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


def _fetch_listing(client: SessionClient) -> Catalog | Printout:
    return listing_of(*client.request("GET", "/v1/servers"))


def _recovery_dir(environ: Mapping[str, str], client: SessionClient | None) -> str:
    configured = environ.get("MCPSQUEEZE_RECOVERY_DIR", "")
    if configured:
        return configured
    try:
        session = client or SessionClient.from_environ(environ)
        status, body = session.request("GET", "/v1/servers", timeout=10.0)
        if status == 200 and isinstance(body, dict) and isinstance(body.get("recovery_dir"), str):
            return str(body["recovery_dir"])
    except MCPSqueezeError:
        pass  # no session: the files are still there to read
    return default_recovery_dir(environ)


def _fetcher(environ: Mapping[str, str], client: SessionClient | None) -> Callable[[str], object]:
    """The session's copy of an original by response id (None when no session answers with one)."""

    def fetch(response_id: str) -> object:
        try:
            session = client or SessionClient.from_environ(environ)
            status, body = session.request("GET", f"/v1/original/{response_id}", timeout=_timeout(environ))
        except MCPSqueezeError:
            return None  # no session: the files are still there to read
        return body if status == 200 else None

    return fetch


def _help(environ: Mapping[str, str], prefix: str, client: SessionClient | None) -> Printout:
    """``mcpsq --help``: the listing when a session answers, else the usage and why (exit 0 either way:
    asking how to use a command is never an error)."""
    from ._help import render_listing, render_usage

    try:
        listing = _fetch_listing(client or SessionClient.from_environ(environ))
    except BackendError as exc:
        return Printout(stdout=render_usage(str(exc), prefix))
    if isinstance(listing, Printout):  # the session answered, but not with a listing: say so, as before
        return listing
    return Printout(stdout=render_listing(listing, prefix))


def _run(
    argv: list[str],
    environ: Mapping[str, str],
    prefix: str,
    read_stdin: Callable[[], str] | None,
    client: SessionClient | None,
) -> Printout:
    if prefix and is_recover(argv):
        request = plan_recover(argv, prefix)
        if isinstance(request, Printout):
            return request
        from pathlib import Path

        def directory() -> Path:
            return Path(_recovery_dir(environ, client))

        return run_recover(request, directory, fetch=_fetcher(environ, client), prefix=prefix)
    if prefix and argv[:1] in (["--help"], ["-h"], ["help"]) and len(argv) == 1:
        return _help(environ, prefix, client)
    session = client or SessionClient.from_environ(environ)
    listing = _fetch_listing(session)
    if isinstance(listing, Printout):
        return listing
    action = plan(argv, listing, prefix=prefix, read_stdin=read_stdin)
    if not isinstance(action, CallPlan):
        return action
    answer = session.request("POST", "/v1/call", action.body(), timeout=_timeout(environ))

    def recovery_dir() -> Path:  # only for a dedup pointer: the original is printed instead
        from pathlib import Path

        return Path(_recovery_dir(environ, session))

    return call_answer(action, *answer, recovery_dir=recovery_dir)


def run(
    argv: list[str],
    environ: Mapping[str, str] | None = None,
    *,
    prefix: str = "mcpsq ",
    read_stdin: Callable[[], str] | None = None,
    client: SessionClient | None = None,
) -> Printout:
    """Everything ``mcpsq`` does but printing: argv in, (stdout, stderr, exit code) out; ``prefix``: ``"mcpsq
    "``, or ``""`` for an entry point (``argv[0]`` its server)."""
    env: Mapping[str, str] = os.environ if environ is None else environ
    try:
        return _run(argv, env, prefix, read_stdin, client)
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


def main(argv: list[str] | None = None, prefix: str = "mcpsq ") -> int:
    """The ``mcpsq`` console script (and, with ``prefix=""``, the installed per-server commands)."""
    words = sys.argv[1:] if argv is None else argv
    outcome = run(words, prefix=prefix, read_stdin=sys.stdin.read)
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
    return outcome.code


def console(argv: list[str] | None = None, prefix: str = "mcpsq ") -> NoReturn:
    """``main``, then leave at once: what the ``mcpsq`` script and the entry points run.

    Everything is written and flushed by then, and the shim registers no atexit hooks, so the
    interpreter's orderly shutdown (tearing down every module and object, ~2 ms of a ~15 ms command
    here) does nothing anyone could see; ``os._exit`` skips it.
    """
    code = main(argv, prefix)
    for stream in (sys.stdout, sys.stderr):
        try:  # noqa: SIM105 - contextlib (and the functools, collections it imports) is too slow here
            stream.flush()
        except (OSError, ValueError):
            pass  # a closed or broken stream: nothing more can be said on it anyway
    os._exit(code)


if __name__ == "__main__":
    console()
