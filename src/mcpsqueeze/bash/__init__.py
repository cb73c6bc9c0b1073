"""The bash-facing side: MCP tools of a ``mcpsqueeze serve`` session as shell commands.

- ``mcpsq`` (``shim.main``): the stdlib-only command line;
- ``install_commands``: one entry point per server (``DIR/github search-issues --query x``);
- ``open_bash`` / ``install_into`` (needs the ``just-bash`` extra): the same commands inside a
  Just-Bash ``AsyncBash`` with the recovery directory mounted read-only at ``/recovery``.

Nothing is imported eagerly: the shim imports this package on every shell command.
"""

from __future__ import annotations

from .._lazy import LazyFace

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ._install import entry_points, install_commands
    from ._session_http import SessionAddress, SessionClient
    from .just_bash import AsyncSessionClient, install_into, open_bash

__all__ = [
    "AsyncSessionClient",
    "SessionAddress",
    "SessionClient",
    "entry_points",
    "install_commands",
    "install_into",
    "open_bash",
]

_WHERE = {
    "SessionAddress": "._session_http",
    "SessionClient": "._session_http",
    "entry_points": "._install",
    "install_commands": "._install",
    "AsyncSessionClient": ".just_bash",
    "install_into": ".just_bash",
    "open_bash": ".just_bash",
}


__getattr__ = LazyFace(__name__, _WHERE, globals())
