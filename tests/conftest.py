"""Shared fixtures: the anyio backend, and `rawclient` (the shared test helpers) importable.

On CI (env CI set) a skipped test is reported as a failure: every part the suite names must really run
there (.ci/run installs what the tests need).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from rawclient import RawClient

TESTS = Path(__file__).resolve().parent
sys.path.insert(0, str(TESTS))


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="session")
def demo_direct() -> Iterator[RawClient]:
    """The demo server's own answers, without a proxy: one initialized `RawClient` on one demo server per
    test process (per xdist worker). Its tools are pure functions of their arguments, so tests that compare
    a shrunk result with the original share it instead of each starting a server (~1.5 s of CPU each).
    Only for tools/call and listings; a test of the handshake itself starts its own."""
    from rawclient import RawClient, demo_server

    with RawClient(demo_server()) as client:
        client.initialize()
        yield client


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[Any]) -> Iterator[None]:
    outcome: Any = yield
    report = outcome.get_result()
    if os.environ.get("CI") and report.skipped and not hasattr(report, "wasxfail"):
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
        report.outcome = "failed"
        report.longrepr = f"skipped on CI, which counts as a failure: {reason}"


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Module-level skips never reach `pytest_runtest_makereport`: on CI they fail the run here."""
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    if os.environ.get("CI") and reporter is not None and reporter.stats.get("skipped"):
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
