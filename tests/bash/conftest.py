"""Fixtures for the shell side: a private recovery directory and a canned session on a Unix socket."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from .canned_session import Session, serve_unix

SHIM = [sys.executable, "-m", "mcpsqueeze.bash.shim"]


@pytest.fixture
def rec_dir(tmp_path: Path) -> Path:
    directory = tmp_path / "recovery"
    directory.mkdir(mode=0o700)
    return directory


@pytest.fixture
def session(tmp_path: Path, rec_dir: Path) -> Iterator[Session]:
    run_dir = tmp_path / "run"
    run_dir.mkdir(mode=0o700)
    with serve_unix(run_dir / "session.sock", Session(rec_dir)) as served:
        yield served


@pytest.fixture
def shim_env(session: Session, tmp_path: Path) -> dict[str, str]:
    """The environment a shell would have: the socket set, nothing pointing at the recovery dir."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("MCPSQUEEZE_")}
    env["MCPSQUEEZE_SOCKET"] = str(session.socket_path)
    env["HOME"] = str(tmp_path / "home")
    return env
