"""Shared fixtures: the anyio backend, and `rawclient` (the shared test helpers) importable.

On CI (env CI set) a skipped test is reported as a failure: every part the suite names must really run
there (.ci/run installs what the tests need).
"""

from __future__ import annotations

import compileall
import functools
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from rawclient import RawClient

TESTS = Path(__file__).resolve().parent
sys.path.insert(0, str(TESTS))

pytest_plugins = ["spawns"]  # --record-spawns=FILE: which test files start processes

# Bytecode, written once. Containers (CI's and ours: Containerfile, the sandboxes) often set
# PYTHONDONTWRITEBYTECODE=1; then each of the suite's ~400 Python subprocesses (wrap, serve, the CLI)
# compiled the package again (~0.1 s of CPU per wrap), and each xdist worker rewrote and compiled every
# test module (~2.5 s per worker). The package is compiled once in `pytest_configure` below, as the
# benchmarks do (scripts/bench/_harness.py); pytest may cache its rewritten test modules. Both go to the
# usual `__pycache__/` directories, which git ignores; reading them needs no permission from the variable.
sys.dont_write_bytecode = False


# The files that take longest (wall seconds under -n 4, most of it waiting on processes and timeouts),
# started first: `--dist loadfile` hands whole files to the workers in the order it is given, and a run
# that starts one of these last ends that much later (xdist's own order, most tests first, puts a file of a
# few slow tests near the end). Measured on the fast subset, 2 cores; see docs/testing.md.
SLOWEST_FIRST = (
    "faults/test_door_memory_stays_bounded.py",
    "proxy/test_wrap_faults.py",
    "serve/test_serve_shim.py",
    "proxy/test_wrap_replicas.py",
    "faults/test_http_session_backends.py",
    "faults/test_counting_under_hostile_sizes.py",
    "proxy/test_wrap_oauth.py",
    "proxy/test_wrap_shrink.py",
    "proxy/test_wrap_stdio.py",
    "accounting/test_fastcount.py",
)


def pytest_configure(config: pytest.Config) -> None:
    if not hasattr(config, "workerinput"):  # once, in the controller (or the only process with -n 0)
        compileall.compile_dir(TESTS.parent / "src", quiet=1)
    if hasattr(config.option, "loadscopereorder"):  # xdist: keep the order below (no reordering by size)
        config.option.loadscopereorder = False


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The slowest files first (a stable sort: every worker collects the same order); tests/fuzz's tests
    carry the `fuzz` marker, so `-m fuzz` runs the hostile-input suite whole."""
    rank = {name: i for i, name in enumerate(SLOWEST_FIRST)}
    for item in items:
        if item.path.is_relative_to(TESTS / "fuzz"):
            item.add_marker(pytest.mark.fuzz)

    def key(item: pytest.Item) -> int:
        return rank.get(item.path.relative_to(TESTS).as_posix(), len(rank))

    items.sort(key=key)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="session")
def demo_direct() -> Iterator[RawClient]:
    """The demo server's own answers, without a proxy: one initialized client of one in-process demo
    server per test process (per xdist worker). Its tools are pure functions of their arguments, so tests
    that compare a shrunk result with the original share it. Only for tools/call and listings."""
    from memwrap import MemoryServer

    with MemoryServer() as client:
        client.initialize()
        yield client


@pytest.fixture(scope="session", autouse=True)
def in_memory_parts() -> Iterator[None]:
    """The parts a door running in this process would spawn run here instead, for the whole run: a
    backend that is the demo server or an MCPServer fixture runs on in-memory pipes: see
    `memwrap.in_memory_parts`. Processes a test spawns itself (a wrap, a serve) spawn theirs."""
    from memwrap import in_memory_parts

    with in_memory_parts():
        yield


@pytest.fixture(autouse=True)
def _real_processes(request: pytest.FixtureRequest) -> Iterator[None]:
    """A test marked `real_processes` gets the real parts: its in-process doors spawn their backends, as
    the CLI does."""
    marker = request.node.get_closest_marker("real_processes")
    if marker is None:
        yield
        return
    from memwrap import real_processes

    with real_processes(*marker.args):
        yield


@pytest.fixture(params=["stdio", "streamable-http"])
def wrap_door(request: pytest.FixtureRequest) -> Callable[..., AbstractContextManager[RawClient]]:
    """`wrap_door(ARGS, target=...)`: `wrap ARGS -- TARGET` in this process, once over each agent-facing
    transport (memwrap.open_wrap: stdio on in-memory pipes, a streamable HTTP session on loopback), as a
    RawClient. For tests of what the session does with messages, which must not depend on the transport."""
    from memwrap import open_wrap

    return functools.partial(open_wrap, request.param)


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
