"""Default places, computed with the standard library only (the shim shares them and must start fast)."""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["default_socket", "runtime_dir"]


def _cache_home() -> Path:
    xdg = os.environ.get("XDG_CACHE_HOME", "")
    return Path(xdg) if os.path.isabs(xdg) else Path.home() / ".cache"


def runtime_dir() -> Path:
    """The user's runtime dir for mcpsqueeze; the cache dir when the system has no runtime dir."""
    xdg = os.environ.get("XDG_RUNTIME_DIR", "")
    if os.path.isabs(xdg) and os.path.isdir(xdg):
        return Path(xdg) / "mcpsqueeze"
    run_user = Path(f"/run/user/{os.geteuid()}")
    if run_user.is_dir():
        return run_user / "mcpsqueeze"
    return _cache_home() / "mcpsqueeze"


def default_socket() -> Path:
    """`MCPSQUEEZE_SOCKET`, else `<runtime dir>/session.sock`."""
    explicit = os.environ.get("MCPSQUEEZE_SOCKET", "")
    return Path(explicit) if explicit else runtime_dir() / "session.sock"
