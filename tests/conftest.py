"""Shared fixtures: the anyio backend, and `rawclient` (the shared test helpers) importable.

On CI (env CI set) a skipped test is reported as a failure: every part the suite names must really run
there (.ci/run installs what the tests need).
"""

from __future__ import annotations

import compileall
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

# Bytecode, written once. Containers (CI's and ours: Containerfile, the sandboxes) often set
# PYTHONDONTWRITEBYTECODE=1; then each of the suite's ~400 Python subprocesses (wrap, serve, the CLI)
# compiled the package again (~0.1 s of CPU per wrap), and each xdist worker rewrote and compiled every
# test module (~2.5 s per worker). The package is compiled once in `pytest_configure` below, as the
# benchmarks do (scripts/bench/_harness.py); pytest may cache its rewritten test modules. Both go to the
# usual `__pycache__/` directories, which git ignores; reading them needs no permission from the variable.
sys.dont_write_bytecode = False


# The files that take longest (wall seconds under -n 4, most of it waiting on processes and timeouts),
# started first: `--dist loadfile` hands whole files to the workers in the order it is given, and a run
# that starts one of these last ends that much later. xdist's own default order (most tests first) put
# test_wrap_oauth (6 tests, ~45 s) near the end. Measured on the fast subset, 2 cores; see docs/testing.md.
SLOWEST_FIRST = (
    "proxy/test_wrap_oauth.py",
    "core/test_client_configs.py",
    "serve/test_serve_shim.py",
    "faults/test_23_15_body_limit.py",
    "proxy/test_wrap_failures.py",
    "fuzz/test_23_2_recover_doors.py",
    "faults/test_23_16_slow_clients.py",
    "faults/test_23_21_early_expiry_refresh.py",
    "proxy/test_wrap_http_modern.py",
    "proxy/test_wrap_http.py",
)


def pytest_configure(config: pytest.Config) -> None:
    if not hasattr(config, "workerinput"):  # once, in the controller (or the only process with -n 0)
        compileall.compile_dir(TESTS.parent / "src", quiet=1)
    if hasattr(config.option, "loadscopereorder"):  # xdist: keep the order below (no reordering by size)
        config.option.loadscopereorder = False


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The slowest files first (a stable sort: every worker collects the same order)."""
    rank = {name: i for i, name in enumerate(SLOWEST_FIRST)}

    def key(item: pytest.Item) -> int:
        return rank.get(item.path.relative_to(TESTS).as_posix(), len(rank))

    items.sort(key=key)


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


@pytest.fixture
def counting_in_process(monkeypatch: pytest.MonkeyPatch) -> None:
    """Token counts made in this test process instead of in a helper process per session.

    For tests of sessions that run in the test process (the relay harness, the library doors `Squeezer`,
    `shrink_tools` and `Client`) and are not about the helper: each session's `TokenCounter` otherwise
    starts its own helper, which loads the o200k tables (~0.4 s of CPU), ~120 times in the fast subset.
    Here the counter falls back to the in-process tokenizer, loaded once per worker (`_count_here`, the
    path it takes when the helper cannot start): the same exact figures, at the same moments. The helper
    is still started by every spawned wrap and serve, and tested on its own (tests/core/test_counter.py,
    tests/faults/test_23_12_counter_memory.py, test_23_13_summary.py, test_23_14_no_orphans.py)."""
    from mcpsqueeze.accounting._counter import TokenCounter

    monkeypatch.setattr(TokenCounter, "_start_helper", lambda self: None)


@pytest.fixture
def demo_backends_in_memory(counting_in_process: None) -> Iterator[None]:
    """A library door's (`Client`'s) backends that are the demo server (or an MCPServer fixture: records,
    seed) run in this process.

    A `Client` spawns each backend of its servers config and talks to it over stdio; a demo server process
    costs ~0.8 s of CPU (most of it importing the SDK). With this fixture such a backend is a fresh
    in-process copy on in-memory pipes instead (`memwrap.demo_backends_here`: the same line channel and
    the same server); other backends, and every spawned wrap or serve, are untouched. The Client's stdio
    backends keep tests without it (tests/api/test_client.py)."""
    from memwrap import demo_backends_here

    with demo_backends_here():
        yield


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
