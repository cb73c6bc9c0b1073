"""``mcpsqueeze install-commands DIR``: one POSIX sh entry point per server, running the shim with its own
file name as the server (``DIR/github search-issues --query x``). It holds no secret (the shim finds the
session), and files not ours are never overwritten. A server named like a command on PATH gets
``mcp-<server>`` with a warning (it would hide that command), unless ``shadow``.
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

from mcpsqueeze._errors import UsageError
from mcpsqueeze._writes import write_ours

from ._names import SERVER_PREFIX, server_command

__all__ = ["MARKER", "entry_point_text", "entry_points", "install_commands"]

MARKER = "# mcpsqueeze-entry-point v1"
_SERVER_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}\Z")
_RESERVED = frozenset({"mcpsq", "mcpsqueeze", "recover"})


def _sh_quote(text: str) -> str:
    return "'" + text.replace("'", "'\\''") + "'"


def entry_point_text(python: str) -> str:
    """The script: ``exec PYTHON -I -c '<run the shim>' "${0##*/}" "$@"`` (``-I``: ignore the cwd,
    PYTHONPATH and user site, so nothing in the agent's working directory can stand in for us)."""
    code = 'import sys; from mcpsqueeze.bash.shim import console; console(sys.argv[1:], prefix="")'
    return (
        "#!/bin/sh\n"
        f"{MARKER}\n"
        "# Runs the tools of the mcpsqueeze session's server named like this file, e.g.\n"
        "#   github search-issues --query x      github --help      github search-issues --help\n"
        "# Written by `mcpsqueeze install-commands`; holds no secrets (the session is found through\n"
        "# MCPSQUEEZE_SOCKET, or MCPSQUEEZE_URL + MCPSQUEEZE_TOKEN_FILE, or the default socket).\n"
        f'exec {_sh_quote(python)} -I -c {_sh_quote(code)} "${{0##*/}}" "$@"\n'
    )


def entry_points(
    directory: Path, servers: list[str], shadow: bool = False
) -> dict[str, tuple[str, str | None]]:
    """Each server's command name in `directory`, and the warning when it is not the server's own name:
    a shell word (``server_command``), or, unless `shadow`, a command already on PATH."""
    ours = os.path.realpath(directory)  # PATH without our own entry points
    entries = os.environ.get("PATH", os.defpath).split(os.pathsep)
    path = os.pathsep.join(p for p in entries if p and os.path.realpath(p) != ours)
    named = {}
    for name in dict.fromkeys(servers):
        command, warning = server_command(name)
        found = None if warning is not None or shadow else shutil.which(name, path=path)
        if found is not None:
            command = SERVER_PREFIX + name
            warning = (
                f"the server {name!r} is named like the command {found} on PATH, which {directory}/{name} "
                f"would hide wherever {directory} comes first; its command is `{command}` instead (`mcpsq "
                f"{name} TOOL ...` works too). Pass --shadow to name it {name} anyway, or rename the server "
                "in the serve config."
            )
        named[name] = (command, warning)
    return named


def install_commands(directory: Path, servers: list[str], python: str, shadow: bool = False) -> list[Path]:
    """Write ``directory/<server>`` (mode 0755) for each server; the paths written. A name that would hide a
    shell keyword, builtin, standard tool or (unless `shadow`) a command on PATH becomes ``mcp-<server>``.
    UsageError (nothing written) for a name that cannot be a command, or a file not ours in the way."""
    if not python:
        raise UsageError("install-commands needs the Python interpreter to run the shim with.")
    if "\n" in python or "\0" in python:
        raise UsageError(f"The interpreter path {python!r} contains a newline or NUL byte.")
    for name in servers:
        if not _SERVER_NAME_RE.match(name) or name in _RESERVED:
            raise UsageError(
                f"The server name {name!r} cannot be a command name (use letters, digits, '.', '_', '-', "
                f"not {', '.join(sorted(_RESERVED))}); rename it in the serve config, or call it via "
                f"`mcpsq {name} ...`."
            )
    directory = Path(directory)
    directory.mkdir(mode=0o755, parents=True, exist_ok=True)
    targets = [directory / command for command, _ in entry_points(directory, servers, shadow).values()]
    text = entry_point_text(python).encode()  # `mcp-time` finds the server `time` by itself
    return write_ours([(target, text) for target in targets], 0o755, (MARKER,), chmod=True)
