"""Shared fixtures: the anyio backend, the npm servers' paths, and `rawclient` importable."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent
sys.path.insert(0, str(TESTS))


def node_paths() -> dict[str, str]:
    """Paths written by scripts/install-test-deps.sh (empty when it has not run)."""
    env_file = ROOT / ".cache" / "node" / "paths.env"
    paths: dict[str, str] = {}
    if env_file.is_file():
        for line in env_file.read_text().splitlines():
            key, sep, value = line.partition("=")
            if sep:
                paths[key.strip()] = value.strip()
    return paths


def require_node_paths(*keys: str) -> dict[str, str]:
    """Skip locally when the public servers are not installed; on CI that is a failure."""
    paths = node_paths()
    missing = [k for k in keys if not Path(paths.get(k, "/nonexistent")).exists()]
    if missing:
        message = f"run scripts/install-test-deps.sh first (missing {', '.join(missing)})"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return paths


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"
