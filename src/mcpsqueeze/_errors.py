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


# Most specific first: the first class an error is an instance of gives its exit code.
_EXIT_CODES: tuple[tuple[type[BaseException], int], ...] = (
    (BackendFailure, EXIT_BACKEND),
    (BackendError, EXIT_UNREACHABLE),
    (MCPSqueezeError, EXIT_USAGE),
)


def exit_code(exc: BaseException) -> int:
    """The exit code every CLI uses for this error (usage/refused input for anything else of ours)."""
    for kind, code in _EXIT_CODES:
        if isinstance(exc, kind):
            return code
    return EXIT_USAGE
