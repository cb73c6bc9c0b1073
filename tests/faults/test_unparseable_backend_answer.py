"""A backend answer the official SDK cannot parse is answered at once, by every door.

The backend (tests/fixtures/unparseable_server.py, its bytes on in-memory pipes) answers a
`structuredContent` 300 levels deep and a lone surrogate escape (valid JSON that mcpsqueeze's own parser
reads: the result comes through), and one 2,000 levels deep (beyond any parser of ours: an error that names
the cause). The SDK's stdio client drops a line it cannot parse, so a door that read stdio backends
through it would never answer (and such a tools/list would hold serve's start until its timeout). Each
door here must answer within a few seconds, and the next call must work.
"""

from __future__ import annotations

import contextlib
import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest

from mcpsqueeze import BackendError, Client
from memwrap import Completed, MemoryWrap, Serve, mcpsq

SERVER = [sys.executable, str(Path(__file__).resolve().parents[1] / "fixtures" / "unparseable_server.py")]
QUICK = 10.0  # seconds: "a few", on a loaded 2-core machine; the SDK path hung for 20 s and more
CAUSE = "nested deeper"  # what the 2,000-deep answer's error must name (the parser's own words)


def _text(result: dict[str, object]) -> str:
    content = result.get("content")
    assert isinstance(content, list)
    return "".join(str(b.get("text")) for b in content if isinstance(b, dict))


# -- serve + mcpsq ---------------------------------------------------------------------------------------


@contextlib.contextmanager
def _serve(tmp_path: Path, *server_args: str) -> Iterator[tuple[dict[str, str], float]]:
    """serve of the unparseable backend: mcpsq's environment, and the seconds it took to be ready."""
    sock = tmp_path / "run" / "s.sock"
    started = time.monotonic()
    args = [
        "--socket",
        str(sock),
        "--recovery-dir",
        str(tmp_path / "rec"),
        "-n",
        "bad",
        "--",
        *SERVER,
        *server_args,
    ]
    with Serve(args):
        yield {**os.environ, "MCPSQUEEZE_SOCKET": str(sock)}, time.monotonic() - started


def _mcpsq(env: dict[str, str], *args: str) -> tuple[Completed, float]:
    started = time.monotonic()
    done = mcpsq(args, env)
    return done, time.monotonic() - started


@pytest.fixture
def serve_env(tmp_path: Path) -> Iterator[dict[str, str]]:
    with _serve(tmp_path) as (env, _):
        yield env


def test_serve_and_mcpsq_answer_an_answer_the_sdk_cannot_parse_at_once(
    serve_env: dict[str, str],
) -> None:
    deep, took = _mcpsq(serve_env, "bad", "deep")
    assert took < QUICK and deep.returncode == 0, (took, deep.stderr)
    assert "deep" in deep.stdout

    surrogate, took = _mcpsq(serve_env, "bad", "surrogate")
    assert took < QUICK and surrogate.returncode == 0, (took, surrogate.stderr)
    assert "half a pair" in surrogate.stdout

    too_deep, took = _mcpsq(serve_env, "bad", "too-deep")
    assert took < QUICK and too_deep.returncode not in (0, 3), (took, too_deep.returncode, too_deep.stderr)
    assert CAUSE in too_deep.stderr and "Traceback" not in too_deep.stderr

    ok, took = _mcpsq(serve_env, "bad", "ok")  # the backend is still up, the session still serves
    assert took < QUICK and ok.returncode == 0 and "fine" in ok.stdout, (took, ok.stderr)


def test_serve_with_an_unreadable_tools_list_is_ready_at_once_and_names_the_cause(
    tmp_path: Path,
) -> None:
    with _serve(tmp_path, "--bad-list") as (env, took):
        assert took < QUICK + 5, took  # not held until a timeout for an answer that never parses
        done, took = _mcpsq(env, "bad", "ok")
        assert took < QUICK and done.returncode != 0, (took, done.stdout)
        assert CAUSE in done.stderr and "Traceback" not in done.stderr


# -- Client ----------------------------------------------------------------------------------------------


@pytest.mark.anyio
async def test_client_answers_an_answer_the_sdk_cannot_parse_at_once() -> None:
    servers = {"bad": {"command": SERVER[0], "args": SERVER[1:]}}
    with anyio.fail_after(4 * QUICK):
        async with Client(servers, shrink=False, dedup=False) as client:
            with anyio.fail_after(QUICK):
                deep = await client.call("bad", "deep", {})
            assert _text(deep) == "deep" and "child" in deep["structuredContent"]
            with anyio.fail_after(QUICK):
                surrogate = await client.call("bad", "surrogate", {})
            assert _text(surrogate) == "half a pair: \ud800 here"
            with anyio.fail_after(QUICK), pytest.raises(BackendError, match=CAUSE):
                await client.call("bad", "too-deep", {})
            with anyio.fail_after(QUICK):
                assert _text(await client.call("bad", "ok", {})) == "fine"


@pytest.mark.anyio
async def test_client_with_an_unreadable_tools_list_fails_at_once_naming_the_cause() -> None:
    servers = {"bad": {"command": SERVER[0], "args": [*SERVER[1:], "--bad-list"]}}
    with anyio.fail_after(QUICK), pytest.raises(BackendError, match=CAUSE):
        async with Client(servers):
            pass


# -- wrap ------------------------------------------------------------------------------------------------


def test_wrap_answers_every_unparseable_answer_and_keeps_serving() -> None:
    with MemoryWrap(["--no-shrink", "--no-dedup"], target=SERVER) as client:
        client.initialize()
        assert _text(client.call("deep", timeout=QUICK)) == "deep"
        assert _text(client.call("surrogate", timeout=QUICK)) == "half a pair: \ud800 here"
        error = client.request("tools/call", {"name": "too-deep", "arguments": {}}, timeout=QUICK)["error"]
        assert CAUSE in error["message"]
        assert _text(client.call("ok", timeout=QUICK)) == "fine"
    with MemoryWrap([], target=[*SERVER, "--bad-list"]) as client:
        client.initialize()
        error = client.request("tools/list", {}, timeout=QUICK)["error"]
        assert CAUSE in error["message"]
