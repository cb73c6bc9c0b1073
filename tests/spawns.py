"""Which test files start processes: `pytest --record-spawns=FILE`.

A test file pays for a process (~0.3-1.5 s of CPU each) only when the process is what it tests; this
plugin measures which files do. While a test runs (setup, call, teardown), every way Python starts a
process is watched: `subprocess.Popen` (and so `subprocess.run`, asyncio's and anyio's processes, the SDK's
stdio client), `_posixsubprocess.fork_exec` (multiprocessing), `os.fork`, `os.forkpty`, `os.posix_spawn`,
`os.posix_spawnp` and `os.system`. A start is charged to the test running at that moment; a module- or
session-scoped fixture that started one is charged to every file that uses it (a file that reads a shared
server depends on that process as much as the file that happened to start it first).

At the end the terminal summary names the files and their count; FILE gets the same as JSON
(`{"files": {path: [commands]}, "cpu": {path: seconds}}`: each file's CPU, its tests' own and that of the
processes they started and reaped). Under xdist each worker writes `FILE.<worker>` and the controller merges
them. Processes started by the processes a test starts are not seen (a file that starts one counts once).
"""

from __future__ import annotations

import _posixsubprocess
import json
import os
import resource
import subprocess
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

__all__ = ["pytest_addoption", "pytest_configure"]


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--record-spawns",
        metavar="FILE",
        default=None,
        help="record which test files start processes; write them to FILE (JSON) and count them",
    )


def pytest_configure(config: pytest.Config) -> None:
    target = config.getoption("--record-spawns")
    if target:
        config.pluginmanager.register(_Recorder(Path(target), config), "record-spawns")


def _command(args: Any) -> str:
    if isinstance(args, (str, bytes)):
        return os.fsdecode(args)
    try:
        return " ".join(os.fsdecode(a) for a in args)
    except TypeError:
        return repr(args)


class _Recorder:
    def __init__(self, target: Path, config: pytest.Config) -> None:
        self.target = target
        self.worker = getattr(config, "workerinput", {}).get("workerid")
        self.controller = self.worker is None and bool(getattr(config.option, "numprocesses", None))
        self.current: str | None = None  # the file of the test running now
        self.starts: dict[str, list[str]] = {}  # file -> commands it started
        self.fixture_starts: dict[str, list[str]] = {}  # wider-scoped fixture (where::name) -> commands
        self.fixtures_used: dict[str, set[str]] = {}  # file -> fixtures its tests use (where::name)
        self.cpu: dict[str, float] = {}  # file -> CPU seconds of its tests (this process and the reaped)
        self._inside = threading.local()
        self._undo: list[Callable[[], None]] = []
        if not self.controller:
            self._watch()

    # -- watching ------------------------------------------------------------------------------------
    def _record(self, command: str) -> None:
        if self.current is not None:
            self.starts.setdefault(self.current, []).append(command)

    def _wrap(self, owner: Any, name: str, describe: Callable[..., str]) -> None:
        original = getattr(owner, name, None)
        if original is None:
            return
        recorder = self

        def watched(*args: Any, **kwargs: Any) -> Any:
            if getattr(recorder._inside, "on", False):  # a lower layer of a start already recorded
                return original(*args, **kwargs)
            recorder._record(describe(*args, **kwargs))
            recorder._inside.on = True
            try:
                return original(*args, **kwargs)
            finally:
                recorder._inside.on = False

        setattr(owner, name, watched)
        self._undo.append(lambda: setattr(owner, name, original))

    def _watch(self) -> None:
        self._wrap(subprocess.Popen, "_execute_child", lambda self, args, *rest, **kw: _command(args))
        self._wrap(_posixsubprocess, "fork_exec", lambda args, *rest, **kw: _command(args))
        self._wrap(os, "posix_spawn", lambda path, argv, *rest, **kw: _command(argv))
        self._wrap(os, "posix_spawnp", lambda path, argv, *rest, **kw: _command(argv))
        self._wrap(os, "system", lambda command: _command(command))
        self._wrap(os, "fork", lambda: "os.fork()")
        self._wrap(os, "forkpty", lambda: "os.forkpty()")

    # -- attribution ---------------------------------------------------------------------------------
    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(self, item: pytest.Item) -> Iterator[None]:
        before = _cpu()
        self.current = _relative(item)
        info = getattr(item, "_fixtureinfo", None)  # the fixtures it uses, where each is defined
        defs = info.name2fixturedefs.items() if info is not None else ()
        used = {f"{d.baseid}::{name}" for name, found in defs for d in found}
        self.fixtures_used.setdefault(self.current, set()).update(used)
        yield  # a background thread's later start is charged to the next test of this worker
        self.cpu[self.current] = self.cpu.get(self.current, 0.0) + _cpu() - before

    @pytest.hookimpl(hookwrapper=True)
    def pytest_fixture_setup(self, fixturedef: pytest.FixtureDef[Any]) -> Iterator[None]:
        before = len(self.starts.get(self.current or "", ()))
        yield
        if fixturedef.scope != "function" and self.current is not None:
            started = self.starts.get(self.current, [])[before:]
            if started:
                key = f"{fixturedef.baseid}::{fixturedef.argname}"
                self.fixture_starts.setdefault(key, []).extend(started)

    # -- the result ----------------------------------------------------------------------------------
    def _mine(self) -> dict[str, Any]:
        return {
            "cpu": self.cpu,
            "starts": self.starts,
            "fixture_starts": self.fixture_starts,
            "fixtures_used": {f: sorted(names) for f, names in self.fixtures_used.items()},
        }

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        for undo in reversed(self._undo):
            undo()
        if self.worker is not None:
            Path(f"{self.target}.{self.worker}").write_text(json.dumps(self._mine()))
            return
        parts = [self._mine()] if not self.controller else []
        for path in sorted(self.target.parent.glob(f"{self.target.name}.gw*")):
            parts.append(json.loads(path.read_text()))
            path.unlink()
        files: dict[str, list[str]] = {}
        spawning = {name for part in parts for name in part["fixture_starts"]}
        for part in parts:
            for file, commands in part["starts"].items():
                files.setdefault(file, []).extend(commands)
        for part in parts:
            for file, names in part["fixtures_used"].items():
                for name in sorted(spawning.intersection(names)):
                    files.setdefault(file, []).append(f"(fixture {name})")
        self.files = dict(sorted(files.items()))
        cpu: dict[str, float] = {}
        for part in parts:
            for file, seconds in part["cpu"].items():
                cpu[file] = round(cpu.get(file, 0.0) + seconds, 2)
        by_cost = dict(sorted(cpu.items(), key=lambda item: -item[1]))
        self.target.write_text(json.dumps({"files": self.files, "cpu": by_cost}, indent=1) + "\n")

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        files = getattr(self, "files", None)
        if files is None:
            return
        terminalreporter.section("test files that start processes")
        for file, commands in files.items():
            terminalreporter.write_line(f"{len(commands):4d}  {file}")
        terminalreporter.write_line(f"{len(files)} test files start processes (details: {self.target})")


def _cpu() -> float:
    """CPU seconds of this process and of the children it reaped, so far."""
    own, reaped = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + reaped.ru_utime + reaped.ru_stime


def _relative(item: pytest.Item) -> str:
    root = Path(__file__).resolve().parent
    try:
        return item.path.resolve().relative_to(root).as_posix()
    except ValueError:
        return str(item.path)
