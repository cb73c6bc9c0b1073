"""Spawning a backend server: its stdin and stdout piped to us, its stderr ours, in a session of its own.
Stdlib only, so that the CLI can start the server before the proxy's modules import."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping, Sequence

from ._errors import BackendError

__all__ = ["spawn"]


def spawn(
    argv: Sequence[str], env: Mapping[str, str] | None = None, cwd: str | None = None
) -> subprocess.Popen[bytes]:
    """The backend process; a missing or unrunnable command is a clear BackendError."""
    try:
        return subprocess.Popen(
            list(argv),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=None,
            env={**os.environ, **env} if env else None,
            cwd=cwd,
            start_new_session=True,
            bufsize=0,
        )
    except FileNotFoundError as exc:
        raise BackendError(
            f"cannot start the backend: command {argv[0]!r} was not found; check the command after '--' "
            "and that it is on PATH"
        ) from exc
    except PermissionError as exc:
        raise BackendError(
            f"cannot start the backend: {argv[0]!r} is not executable ({exc.strerror})"
        ) from exc
    except OSError as exc:
        raise BackendError(f"cannot start the backend {argv[0]!r}: {exc}") from exc
