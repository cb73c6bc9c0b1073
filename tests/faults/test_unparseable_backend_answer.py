"""Issue 23 item 3: a backend answer the official SDK cannot parse is answered at once, by every door.

The backend is a real stdio process (tests/fixtures/unparseable_server.py): a `structuredContent` 300
levels deep and a lone surrogate escape (valid JSON that mcpsqueeze's own parser reads: the result comes
through), and one 2,000 levels deep (beyond any parser of ours: an error that names the cause). Before the
fix, serve and `Client` spoke to stdio backends through the SDK, which drops a line it cannot parse:
`mcpsq` timed out after 20 s, `Client.call` never returned, and such a tools/list held serve's start for
60 s. Each door here must answer within a few seconds, and the next call must work.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest

from mcpsqueeze import BackendError, Client
from rawclient import RawClient, cli, serve_ready

SERVER = [sys.executable, str(Path(__file__).resolve().parents[1] / "fixtures" / "unparseable_server.py")]
QUICK = 10.0  # seconds: "a few", on a loaded 2-core machine; the SDK path hung for 20 s and more
CAUSE = "nested deeper"  # what the 2,000-deep answer's error must name (the parser's own words)


def _text(result: dict[str, object]) -> str:
    content = result.get("content")
    assert isinstance(content, list)
    return "".join(str(b.get("text")) for b in content if isinstance(b, dict))


# -- serve + mcpsq ---------------------------------------------------------------------------------------


def _serve(tmp_path: Path, *server_args: str) -> tuple[subprocess.Popen[str], dict[str, str], float]:
    """A real serve of the unparseable backend; its process, mcpsq's environment, seconds to be ready."""
    sock = tmp_path / "run" / "s.sock"
    argv = cli(
        "serve", "--socket", str(sock), "--recovery-dir", str(tmp_path / "rec"), "-n", "bad", "--",
        *SERVER, *server_args,
    )  # fmt: skip
    started = time.monotonic()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    assert proc.stderr is not None
    serve_ready(proc)
    env = {**os.environ, "MCPSQUEEZE_SOCKET": str(sock)}
    return proc, env, time.monotonic() - started


def _mcpsq(env: dict[str, str], *args: str) -> tuple[subprocess.CompletedProcess[str], float]:
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "mcpsqueeze.bash.shim", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=30,
        errors="backslashreplace",
    )
    return done, time.monotonic() - started


def _stop(proc: subprocess.Popen[str]) -> None:
    proc.send_signal(signal.SIGTERM)
    try:
        proc.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()


@pytest.fixture
def serve_env(tmp_path: Path) -> Iterator[dict[str, str]]:
    proc, env, _ = _serve(tmp_path)
    yield env
    _stop(proc)


def test_23_3_serve_and_mcpsq_answer_an_answer_the_sdk_cannot_parse_at_once(
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


def test_23_3_serve_with_an_unreadable_tools_list_is_ready_at_once_and_names_the_cause(
    tmp_path: Path,
) -> None:
    proc, env, took = _serve(tmp_path, "--bad-list")
    try:
        assert took < QUICK + 5, took  # the SDK waited 60 s for an answer it had dropped
        done, took = _mcpsq(env, "bad", "ok")
        assert took < QUICK and done.returncode != 0, (took, done.stdout)
        assert CAUSE in done.stderr and "Traceback" not in done.stderr
    finally:
        _stop(proc)


# -- Client ----------------------------------------------------------------------------------------------


@pytest.mark.anyio
async def test_23_3_client_answers_an_answer_the_sdk_cannot_parse_at_once() -> None:
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
async def test_23_3_client_with_an_unreadable_tools_list_fails_at_once_naming_the_cause() -> None:
    servers = {"bad": {"command": SERVER[0], "args": [*SERVER[1:], "--bad-list"]}}
    with anyio.fail_after(QUICK), pytest.raises(BackendError, match=CAUSE):
        async with Client(servers):
            pass


# -- wrap (its stdio relay had this right already: kept so) ------------------------------------------------


def test_23_3_wrap_answers_every_unparseable_answer_and_keeps_serving() -> None:
    with RawClient(cli("wrap", "--no-shrink", "--no-dedup", "--", *SERVER)) as client:
        client.initialize()
        assert _text(client.call("deep", timeout=QUICK)) == "deep"
        assert _text(client.call("surrogate", timeout=QUICK)) == "half a pair: \ud800 here"
        error = client.request("tools/call", {"name": "too-deep", "arguments": {}}, timeout=QUICK)["error"]
        assert CAUSE in error["message"]
        assert _text(client.call("ok", timeout=QUICK)) == "fine"
    with RawClient(cli("wrap", "--", *SERVER, "--bad-list")) as client:
        client.initialize()
        error = client.request("tools/list", {}, timeout=QUICK)["error"]
        assert CAUSE in error["message"]
