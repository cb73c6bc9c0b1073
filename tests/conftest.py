"""Shared fixtures: the anyio backend, and `rawclient` (the shared test helpers) importable."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
sys.path.insert(0, str(TESTS))


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"
