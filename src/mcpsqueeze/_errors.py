"""The one exception tree of mcpsqueeze.

MCPSqueezeError
 ├── UsageError          bad flags or input from the user          (exit 2)
 ├── RecoveryError       an original cannot be stored or found      (exit 2 when refused)
 │    └── RefusedPathError  a path that escapes the recovery directory
 ├── BackendError        the backend or session cannot be reached   (exit 3)
 │    └── BackendFailure  it was reached but failed or timed out     (exit 4)
 └── ShrinkError         no useful preview fits the budget

Only the CLIs turn these into exit codes, all through ``exit_code`` below (DESIGN.md): 0 ok, 1 the tool
reported an error, 2 usage error or refused input, 3 session or backend unreachable, 4 backend failure
or timeout. Stdlib-only and import-free: the bash shim imports this on every command.
"""

from __future__ import annotations

import os
import sys

__all__ = [
    "EXIT_BACKEND",
    "EXIT_OK",
    "EXIT_TOOL_ERROR",
    "EXIT_UNREACHABLE",
    "EXIT_USAGE",
    "BackendError",
    "BackendFailure",
    "MCPSqueezeError",
    "RecoveryError",
    "RefusedPathError",
    "ShrinkError",
    "UsageError",
    "exit_code",
    "first_leaf",
    "install_hint",
]

EXIT_OK = 0
EXIT_TOOL_ERROR = 1
EXIT_USAGE = 2
EXIT_UNREACHABLE = 3
EXIT_BACKEND = 4


class MCPSqueezeError(Exception):
    """Root of every error mcpsqueeze raises on purpose."""


class UsageError(MCPSqueezeError):
    """The user asked for something invalid; the message says how to fix it."""


class RecoveryError(MCPSqueezeError):
    """An original could not be stored, or an id/path names nothing recoverable."""


class RefusedPathError(RecoveryError):
    """A path resolves outside the recovery directory or is not a plain file of ours."""


class BackendError(MCPSqueezeError):
    """The backend server (or the serve session) could not be started or reached."""


class BackendFailure(BackendError):
    """The backend was reached but failed, died or did not answer in time."""


class ShrinkError(MCPSqueezeError):
    """No useful preview plus notice fits into the budget."""


def exit_code(exc: BaseException) -> int:
    """The exit code every CLI uses for this error (usage/refused input for anything else of ours)."""
    if isinstance(exc, BackendFailure):  # (a BackendError too: the more specific first)
        return EXIT_BACKEND
    return EXIT_UNREACHABLE if isinstance(exc, BackendError) else EXIT_USAGE


def first_leaf(exc: BaseException) -> BaseException:
    """The first error inside (possibly nested) exception groups: what a task group's failure was."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


def install_hint(extra: str, packages: str, prefix: str | None = None) -> str:
    """How to add an extra to the installation that is running: ``pipx inject mcpsqueeze redis`` under
    pipx (pip cannot reach into a pipx venv), ``pip install 'mcpsqueeze[redis]'`` elsewhere. A pipx venv
    is ``~/.local/pipx/venvs/NAME``, or wherever PIPX_HOME puts ``venvs/``; pipx writes
    ``pipx_metadata.json`` there."""
    path = os.path.normpath(sys.prefix if prefix is None else prefix)
    parent, name = os.path.split(path)
    home = os.path.dirname(parent)  # ~/.local/pipx, ~/.local/share/pipx (older pipx), or PIPX_HOME
    pipx_home = os.path.basename(parent) == "venvs" and (
        os.path.basename(home) in ("pipx", ".pipx") or home == os.environ.get("PIPX_HOME")
    )
    if pipx_home or os.path.exists(os.path.join(path, "pipx_metadata.json")):
        return f"pipx inject {name} {packages}"
    return f"pip install 'mcpsqueeze[{extra}]'"
