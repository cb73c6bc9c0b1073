"""The one exception tree of mcpsqueeze.

MCPSqueezeError
 ├── UsageError          bad flags or input from the user          (exit 2)
 ├── RecoveryError       an original cannot be stored or found      (exit 2 when refused)
 │    └── RefusedPathError  a path that escapes the recovery directory
 ├── BackendError        the backend cannot be started or reached   (exit 3)
 └── ShrinkError         no useful preview fits the budget

Only the CLI turns these into exit codes; everything else raises or maps them.
"""

from __future__ import annotations

__all__ = [
    "BackendError",
    "MCPSqueezeError",
    "RecoveryError",
    "RefusedPathError",
    "ShrinkError",
    "UsageError",
]


class MCPSqueezeError(Exception):
    """Root of every error mcpsqueeze raises on purpose."""


class UsageError(MCPSqueezeError):
    """The user asked for something invalid; the message says how to fix it."""


class RecoveryError(MCPSqueezeError):
    """An original could not be stored, or an id/path names nothing recoverable."""


class RefusedPathError(RecoveryError):
    """A path resolves outside the recovery directory or is not a plain file of ours."""


class BackendError(MCPSqueezeError):
    """The backend server could not be started, reached, or died."""


class ShrinkError(MCPSqueezeError):
    """No useful preview plus notice fits into the budget."""
