"""Fixtures for the container tests: the image built from this checkout, hardened containers, exec.

Every test here carries the ``container`` mark. Without a Docker engine they are skipped locally
and fail when ``CI`` is set (a skipped container test on CI would be a silent hole).

- ``MCPSQUEEZE_TEST_IMAGE=NAME``: use an image that is already built (``.ci/run`` builds it once with
  ``scripts/ci-docker.sh``); otherwise the session builds ``mcpsqueeze:pytest`` from this checkout
  with ``scripts/ci-docker.sh`` and removes it at the end.
- ``BASE_IMAGE``: base for that build (default ``mcpsqueeze-base:bookworm``, made from Debian packages;
  ``python:3.11-slim`` where a registry is reachable).

The containers run the way the README tells users to: read-only root, tmpfs /tmp, no network, all
capabilities dropped, no-new-privileges, and a host directory owned by uid 10001 (mode 0700)
bind-mounted read-write at /recovery.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

# Ryuk's image cannot be pulled without a registry; the fixtures remove what they start themselves.
os.environ.setdefault("TESTCONTAINERS_RYUK_DISABLED", "true")

ROOT = Path(__file__).resolve().parents[2]
IMAGE_UID = 10001
IMAGE_GID = 10001
READY_TIMEOUT = 60.0
CI = bool(os.environ.get("CI"))


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    here = Path(__file__).parent
    for item in items:
        if here in Path(str(item.fspath)).parents:
            item.add_marker(pytest.mark.container)


def unavailable(message: str) -> None:
    """Skip locally; on CI a missing prerequisite is a failure."""
    if CI:
        pytest.fail(f"{message} (CI is set: container tests must run here)")
    pytest.skip(message)


@dataclass
class Exec:
    code: int
    stdout: str
    stderr: str

    def __str__(self) -> str:
        return f"exit {self.code}\n--- stdout\n{self.stdout[-3000:]}\n--- stderr\n{self.stderr[-3000:]}"


class Box:
    """A running container, driven by exec (nothing is published on any network)."""

    def __init__(self, container: Any, recovery: Path) -> None:
        self.container = container  # testcontainers DockerContainer
        self.recovery = recovery  # the host side of /recovery

    @property
    def raw(self) -> Any:
        return self.container.get_wrapped_container()

    def sh(self, script: str, user: str | None = None, timeout_env: dict[str, str] | None = None) -> Exec:
        return self.run("sh", "-c", script, user=user, environment=timeout_env)

    def run(self, *argv: str, user: str | None = None, environment: dict[str, str] | None = None) -> Exec:
        kwargs: dict[str, Any] = {"demux": True}
        if user is not None:
            kwargs["user"] = user
        if environment:
            kwargs["environment"] = environment
        for _attempt in range(3):
            code, (out, err) = self.raw.exec_run(list(argv), **kwargs)
            # Docker's exec attach can miss all the output of a process that exits at once, under load
            # (docker/docker-py#2042: "sometimes output is an empty string"); seen here once as a shim
            # call answering code 0 with no stdout and no stderr at all. Every command these tests run
            # is a read or idempotent, so a silent success is asked again; a real empty answer stays
            # empty after three tries and fails its test as before.
            if code != 0 or out is not None or err is not None:
                break
        return Exec(code, (out or b"").decode("utf-8", "replace"), (err or b"").decode("utf-8", "replace"))

    def logs(self) -> tuple[str, str]:
        out = self.raw.logs(stdout=True, stderr=False).decode("utf-8", "replace")
        err = self.raw.logs(stdout=False, stderr=True).decode("utf-8", "replace")
        return out, err


@pytest.fixture(scope="session")
def docker_client() -> Any:
    try:
        import docker  # type: ignore[import-untyped]
        from testcontainers.core.container import DockerContainer  # noqa: F401
    except ImportError as exc:
        unavailable(f"docker/testcontainers are not installed: {exc}")
    try:
        client = docker.from_env()
        client.ping()
    except Exception as exc:
        unavailable(f"no Docker engine answers ({exc}); run scripts/ci-docker.sh as root to start one")
    return client


@pytest.fixture(scope="session")
def host_root() -> None:
    if os.geteuid() != 0:
        unavailable("the container tests chown a host directory to uid 10001 and need root")


@pytest.fixture(scope="session")
def image(docker_client: Any, host_root: None) -> Iterator[str]:
    """The image under test, built from this checkout unless MCPSQUEEZE_TEST_IMAGE names one."""
    given = os.environ.get("MCPSQUEEZE_TEST_IMAGE")
    if given:
        try:
            docker_client.images.get(given)
        except Exception:
            pytest.fail(
                f"MCPSQUEEZE_TEST_IMAGE={given} does not exist; build it with scripts/ci-docker.sh {given}"
            )
        yield given
        return
    tag = "mcpsqueeze:pytest"
    env = {**os.environ, "PYTHON": sys.executable}
    started = time.monotonic()
    proc = subprocess.run(
        ["sh", str(ROOT / "scripts" / "ci-docker.sh"), tag],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    if proc.returncode != 0:
        pytest.fail(f"building the image failed:\n{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}")
    print(f"built {tag} in {time.monotonic() - started:.1f}s", file=sys.stderr)
    yield tag
    with contextlib.suppress(Exception):
        docker_client.images.remove(tag, force=True)


def private_dir(base: Path) -> Path:
    """A host directory the image's user owns, mode 0700: what the README tells users to create."""
    base.mkdir(parents=True, exist_ok=True)
    os.chown(base, IMAGE_UID, IMAGE_GID)
    base.chmod(0o700)
    return base


def empty(directory: Path) -> None:
    for entry in directory.iterdir():
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry)
        else:
            entry.unlink()


def hardened(image: str, recovery: Path, command: list[str] | None = None, **extra: Any) -> Any:
    """A DockerContainer with the README's run flags (not started)."""
    from testcontainers.core.container import DockerContainer

    container = DockerContainer(image)
    container.with_volume_mapping(str(recovery), "/recovery", mode="rw")
    # testcontainers' size argument is broken in 4.x: pass the option string.
    container.with_tmpfs_mount("/tmp", "rw,noexec,nosuid,size=64m")
    if command is not None:
        container.with_command(command)
    container.with_kwargs(
        network_mode="none",
        read_only=True,
        cap_drop=["ALL"],
        security_opt=["no-new-privileges"],
        **extra,
    )
    return container


def poll(check: Callable[[], bool], timeout: float, what: str, detail: Callable[[], str] = str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.2)
    pytest.fail(f"timed out after {timeout:.0f}s waiting for {what}\n{detail()}")


def wait_ready(box: Box, timeout: float = READY_TIMEOUT) -> None:
    """Until `mcpsqueeze health` (what the HEALTHCHECK runs) says every backend is up."""
    last: list[Exec] = []

    def healthy() -> bool:
        box.raw.reload()
        if box.raw.status not in ("created", "running"):
            pytest.fail(f"the container exited early:\n{box.logs()[1][-4000:]}")
        result = box.run("mcpsqueeze", "health")
        last[:] = [result]
        return result.code == 0

    poll(
        healthy, timeout, "the session to report healthy", lambda: f"{last[-1] if last else ''}\n{box.logs()}"
    )


@pytest.fixture(scope="module")
def start_box(
    image: str, host_root: None, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Callable[..., Box]]:
    """Start hardened containers of the image; all are removed when the module ends."""
    started: list[Any] = []

    def start(
        command: list[str] | None = None,
        name: str = "box",
        mounts: dict[str, str] | None = None,
        env: dict[str, str] | None = None,
        **extra: Any,
    ) -> Box:
        """``mounts`` maps host paths to container paths, mounted read-only."""
        recovery = private_dir(tmp_path_factory.mktemp(name) / "recovery")
        container = hardened(image, recovery, command, **extra)
        for host, inside in (mounts or {}).items():
            container.with_volume_mapping(host, inside, mode="ro")
        for key, value in (env or {}).items():
            container.with_env(key, value)
        container.start()
        started.append(container)
        return Box(container, recovery)

    yield start
    for container in started:
        with contextlib.suppress(Exception):
            container.stop()


@pytest.fixture(scope="module")
def sandbox(start_box: Callable[..., Box]) -> Box:
    """A hardened container that only sleeps: for cleanup tests that need no session."""
    return start_box(["sleep", "infinity"], name="sandbox")


@pytest.fixture(scope="module")
def proxy(start_box: Callable[..., Box]) -> Box:
    """The image's default command, `mcpsqueeze serve` with the demo backend, once healthy."""
    # The image's own HEALTHCHECK, only polled every second so that Docker's view settles quickly.
    box = start_box(
        None, name="proxy", healthcheck={"interval": 1_000_000_000, "start_period": 60_000_000_000}
    )
    wait_ready(box)
    return box
