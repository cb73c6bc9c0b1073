"""The shell door: a ``mcpsqueeze serve`` session's tools as shell commands: ``mcpsq`` (``shim``, stdlib
only), one entry point per server (``install_commands``), and the same inside a Just-Bash shell
(``open_bash``, ``install_into``; the ``just-bash`` extra). Names load on first use: the shim imports this
package on every command.
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
