"""Every default place mcpsqueeze uses (recovery dir, config file, session socket). Stdlib only, no pathlib at
import (the shim uses it on every command); what ``platformdirs`` gives on XDG systems, and
``platformdirs`` itself, lazily, elsewhere, so the proxy and the shim always agree.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False  # not `from typing`: the shim loads this module and typing costs milliseconds

if TYPE_CHECKING:
    from collections.abc import Mapping
    from pathlib import Path

__all__ = [
    "cache_home",
    "default_config_path",
    "default_socket",
    "recovery_dir_in",
    "socket_candidates",
]

_XDG = sys.platform not in ("darwin", "win32", "cygwin")
RUN_USER = "/run/user"  # where systemd-logind makes each user's runtime dir, without XDG_RUNTIME_DIR


def _xdg(environ: Mapping[str, str], variable: str, fallback: str) -> str:
    """`$variable` when it is an absolute path, else `fallback` under the home directory."""
    value = environ.get(variable, "")
    if os.path.isabs(value):
        return value
    home = environ.get("HOME", "")
    return os.path.join(home if os.path.isabs(home) else os.path.expanduser("~"), fallback)


def cache_home(environ: Mapping[str, str] | None = None) -> str:
    """The user's cache base (``$XDG_CACHE_HOME``, else ``~/.cache``), without the app name."""
    env = os.environ if environ is None else environ
    if not _XDG:  # pragma: no cover - exercised on macOS/Windows only
        import platformdirs

        return os.path.dirname(platformdirs.user_cache_dir("mcpsqueeze"))
    return _xdg(env, "XDG_CACHE_HOME", ".cache")


def recovery_dir_in(environ: Mapping[str, str] | None = None) -> str:
    """``<cache>/mcpsqueeze/recovery`` as a string (the shim's form: no pathlib)."""
    return os.path.join(cache_home(environ), "mcpsqueeze", "recovery")


def default_config_path() -> Path:
    """``<user config dir>/mcpsqueeze/config.toml`` (``$XDG_CONFIG_HOME``, else ``~/.config``)."""
    from pathlib import Path

    if not _XDG:  # pragma: no cover - exercised on macOS/Windows only
        import platformdirs

        return Path(platformdirs.user_config_dir("mcpsqueeze")) / "config.toml"
    return Path(_xdg(os.environ, "XDG_CONFIG_HOME", ".config")) / "mcpsqueeze" / "config.toml"


def default_socket(ours: bool = False) -> Path:
    """`MCPSQUEEZE_SOCKET`, else `session.sock` in the user's runtime dir for mcpsqueeze (the cache dir
    when the system has no runtime dir); with `ours`, always the latter."""
    from pathlib import Path

    explicit = "" if ours else os.environ.get("MCPSQUEEZE_SOCKET", "")
    if explicit:
        return Path(explicit)
    xdg = os.environ.get("XDG_RUNTIME_DIR", "")
    if os.path.isabs(xdg) and os.path.isdir(xdg):
        return Path(xdg, "mcpsqueeze", "session.sock")
    run_user = Path(RUN_USER, str(os.geteuid()))
    base = run_user if run_user.is_dir() else Path(cache_home())
    return base / "mcpsqueeze" / "session.sock"


def socket_candidates(environ: Mapping[str, str]) -> list[str]:
    """Where ``serve`` may have put its socket, in platformdirs' runtime-dir order ($XDG_RUNTIME_DIR when
    safe, /run/user/<uid>, <tmp>/runtime-<uid>, the cache dir, /run/mcpsqueeze); the shim takes the first
    where a socket exists."""
    uid = os.geteuid()
    bases: list[str] = []
    xdg = environ.get("XDG_RUNTIME_DIR", "")
    if os.path.isabs(xdg):
        bases.append(xdg)
    bases.append(f"/run/user/{uid}")
    for name in ("TMPDIR", "TEMP", "TMP"):
        value = environ.get(name, "")
        if os.path.isabs(value):
            bases.append(os.path.join(value, f"runtime-{uid}"))
            break
    else:
        bases.append(f"/tmp/runtime-{uid}")
    bases.append(cache_home(environ))
    candidates = [os.path.join(b, "mcpsqueeze", "session.sock") for b in bases]
    candidates.append("/run/mcpsqueeze/session.sock")
    return list(dict.fromkeys(candidates))
