"""Fixtures for the demo server tests: the anyio backend and how to launch the server."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp import StdioServerParameters

SRC = Path(__file__).resolve().parents[2] / "src"


def server_env() -> dict[str, str]:
    """The test environment, with `src` importable even when mcpsqueeze is not installed."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(SRC), env.get("PYTHONPATH", "")) if p)
    return env


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def demo_env() -> dict[str, str]:
    return server_env()


@pytest.fixture
def demo_stdio() -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable, args=["-m", "mcpsqueeze.demo.server"], env=server_env()
    )


@pytest.fixture
def demo_in_memory() -> Any:
    """The demo server's MCPServer, a fresh copy (its per-process state clean, as a new process's), for
    the SDK's in-memory transport: `mcp.Client(demo_in_memory)`. Its stdio and HTTP transports keep
    tests of their own (a demo server process costs ~0.8 s of CPU, most of it importing the SDK)."""
    from memwrap import fresh_demo

    return fresh_demo().mcp
