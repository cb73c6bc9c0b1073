"""The real `mcpsqueeze serve` process and real `mcpsq` shim processes, end to end: the shell door's
calls, errors and exit codes, its sockets and tokens, the summary on SIGTERM, and SIGTERM ending serve
within its grace period even with a call to a hung backend in flight."""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from rawclient import (
    KITCHEN_SINK_ARGS,
    KITCHEN_SINK_FLAGS,
    cli,
    demo_server,
    free_port,
    require_node_paths,
    serve_ready,
    wait_for,
)


@dataclass
class Session:
    proc: subprocess.Popen[str]
    env: dict[str, str]
    recovery: Path
    stats: Path

    def shim(self, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "mcpsqueeze.bash.shim", *args],
            capture_output=True,
            text=True,
            env=self.env,
            input=stdin,
            timeout=60,
        )

    def stop(self) -> str:
        self.proc.send_signal(signal.SIGTERM)
        _, err = self.proc.communicate(timeout=30)
        return err


def _start(tmp_path: Path, *args: str, env_extra: dict[str, str] | None = None) -> Session:
    run = tmp_path / "run"
    recovery = tmp_path / "recovery"
    stats = tmp_path / "stats.jsonl"
    argv = cli(
        "serve", "--recovery-dir", str(recovery), "--stats-file", str(stats), "--budget", "4000", *args
    )
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    assert proc.stderr is not None
    serve_ready(proc)
    env = {**os.environ, "MCPSQUEEZE_SOCKET": str(run / "s.sock"), "MCPSQUEEZE_RECOVERY_DIR": str(recovery)}
    env.update(env_extra or {})
    return Session(proc, env, recovery, stats)


def _demo_session(directory: Path) -> Iterator[Session]:
    s = _start(directory, "--socket", str(directory / "run" / "s.sock"), "-n", "demo", "--", *demo_server())
    yield s
    if s.proc.poll() is None:
        s.stop()


@pytest.fixture(scope="module")
def session(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Session]:
    """One serve of the demo server for the tests that call tools and read the answers: each calls with
    arguments of its own, so none sees another's earlier result (the shell door never shows deltas, and
    its stdout carries a repeated result's data). A serve and its demo server cost ~1.5 s of CPU."""
    yield from _demo_session(tmp_path_factory.mktemp("serve"))


@pytest.fixture
def own_session(tmp_path: Path) -> Iterator[Session]:
    """A serve of its own, for a test that crashes its backend or stops it."""
    yield from _demo_session(tmp_path)


def test_listing_shows_servers_and_kebab_case_tools(session: Session) -> None:
    done = session.shim()
    assert done.returncode == 0
    assert "demo search-issues" in done.stdout and "demo kitchen-sink" in done.stdout


def test_flags_of_every_kind_reach_the_tool_as_typed_arguments(session: Session) -> None:
    done = session.shim("demo", "kitchen-sink", *KITCHEN_SINK_FLAGS)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == KITCHEN_SINK_ARGS


def test_json_input_from_stdin_and_usage_errors_exit_2(session: Session) -> None:
    ok = session.shim("demo", "kitchen-sink", "--json", "-", stdin='{"page_id": "x", "tags": ["t"]}')
    assert ok.returncode == 0 and json.loads(ok.stdout)["tags"] == ["t"]
    missing = session.shim("demo", "kitchen-sink")
    assert missing.returncode == 2 and "--page-id" in missing.stderr
    bad_int = session.shim("demo", "kitchen-sink", "--page-id", "x", "--page-size", "many")
    assert bad_int.returncode == 2
    bad_enum = session.shim("demo", "kitchen-sink", "--page-id", "x", "--mode", "medium")
    assert bad_enum.returncode == 2 and "fast" in bad_enum.stderr


def test_a_large_result_is_valid_json_on_stdout_with_a_one_line_notice_on_stderr(session: Session) -> None:
    done = session.shim("demo", "search-issues", "--query", "shim")
    assert done.returncode == 0
    preview = json.loads(done.stdout)
    assert len(done.stdout) <= 4000 and "issues" in preview and "truncation" in preview
    notice = done.stderr.strip().splitlines()
    assert len(notice) == 1
    response_id = preview["truncation"]["response_id"]
    path = preview["truncation"]["original_response_file"]
    assert response_id in notice[0] and path in notice[0]
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert stat.S_IMODE(session.recovery.stat().st_mode) == 0o700
    by_id = session.shim("recover", response_id)
    by_path = session.shim("recover", path)
    pointer = session.shim("recover", response_id, "--pointer", "/issues/3/key")
    assert by_id.returncode == 0 and len(by_id.stdout) > 100_000
    assert by_path.stdout == by_id.stdout
    assert json.loads(by_id.stdout)["issues"][3]["key"] == pointer.stdout.strip()


def test_full_and_raw_across_separate_shim_calls(session: Session) -> None:
    full = session.shim("demo", "read-file", "--path", "a.md", "--full")
    assert full.returncode == 0 and len(full.stdout) > 50_000 and full.stderr == ""
    raw = session.shim("demo", "add", "--a", "2", "--b", "3", "--raw")
    envelope = json.loads(raw.stdout)
    assert envelope["structuredContent"] == {"a": 2, "b": 3, "sum": 5}


def test_tool_errors_exit_1_with_the_text_on_stderr(session: Session) -> None:
    done = session.shim("demo", "fail", "--message", "it broke")
    assert done.returncode == 1
    assert "it broke" in done.stderr and done.stdout == ""


def test_unknown_server_or_tool_is_a_usage_error(session: Session) -> None:
    assert session.shim("nope", "x").returncode == 2
    assert session.shim("demo", "no-such-tool").returncode == 2


def test_a_backend_crash_is_exit_4_and_the_session_reconnects(own_session: Session) -> None:
    crashed = own_session.shim("demo", "crash")
    assert crashed.returncode == 4
    again = own_session.shim("demo", "echo", "--text", "back")
    assert again.returncode == 0 and again.stdout.strip() == "back"


def test_no_session_is_exit_3_with_advice(tmp_path: Path) -> None:
    env = {**os.environ, "MCPSQUEEZE_SOCKET": str(tmp_path / "none.sock")}
    done = subprocess.run(
        [sys.executable, "-m", "mcpsqueeze.bash.shim", "demo", "echo", "--text", "x"],
        capture_output=True,
        text=True,
        env=env,
        timeout=30,
    )
    assert done.returncode == 3 and "mcpsqueeze serve" in done.stderr


def test_socket_is_0600_in_a_0700_directory_and_sigterm_prints_the_summary(
    own_session: Session, tmp_path: Path
) -> None:
    sock = tmp_path / "run" / "s.sock"
    assert stat.S_IMODE(sock.stat().st_mode) == 0o600
    assert stat.S_IMODE(sock.parent.stat().st_mode) == 0o700
    own_session.shim("demo", "echo", "--text", "x")
    err = own_session.stop()
    assert own_session.proc.returncode == 0
    assert "mcpsqueeze session summary:" in err and "calls proxied    1" in err
    assert not sock.exists()


def test_health_reports_backends(session: Session) -> None:
    done = subprocess.run(
        cli("health", "--socket", session.env["MCPSQUEEZE_SOCKET"]),
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert done.returncode == 0 and done.stdout.strip() == "ok"


def test_tcp_requires_the_token_and_a_refused_request_never_reaches_a_backend(tmp_path: Path) -> None:
    token = tmp_path / "tok" / "token"
    marker = tmp_path / "marker"
    backend = [
        sys.executable,
        str(Path(__file__).parents[1] / "fixtures" / "counting_backend.py"),
        str(marker),
    ]
    port = free_port()
    s = _start(
        tmp_path, "--listen", f"127.0.0.1:{port}", "--token-file", str(token), "-n", "c", "--", *backend
    )
    try:
        assert stat.S_IMODE(token.stat().st_mode) == 0o600
        secret = token.read_text().strip()
        assert len(secret) == 64  # 256 bits, hex
        url = f"http://127.0.0.1:{port}/v1/call"
        body = json.dumps({"server": "c", "tool": "count", "arguments": {}}).encode()
        near_miss = secret[:-1] + ("1" if secret[-1] == "0" else "0")
        for auth in (None, "Bearer wrong", "Bearer " + near_miss, "Basic " + secret):
            request = urllib.request.Request(url, data=body, method="POST")
            if auth:
                request.add_header("Authorization", auth)
            with pytest.raises(urllib.error.HTTPError) as refused:
                urllib.request.urlopen(request, timeout=10)
            assert refused.value.code == 401
        assert not marker.exists()  # no backend call was made
        env = {
            **os.environ,
            "MCPSQUEEZE_URL": f"http://127.0.0.1:{port}",
            "MCPSQUEEZE_TOKEN_FILE": str(token),
        }
        env.pop("MCPSQUEEZE_SOCKET", None)
        ok = subprocess.run(
            [sys.executable, "-m", "mcpsqueeze.bash.shim", "c", "count"],
            capture_output=True,
            text=True,
            env=env,
        )
        assert ok.returncode == 0, ok.stderr
        assert marker.read_text() == "1"
        assert secret not in ok.stdout + ok.stderr
        assert secret not in " ".join(s.proc.args)  # never in argv
    finally:
        s.stop()


@pytest.mark.slow  # npm server-everything: a public server
def test_config_with_a_public_server_and_tool_filters(tmp_path: Path) -> None:
    paths = require_node_paths("NODE22", "EVERYTHING_JS")
    config = tmp_path / "servers.json"
    config.write_text(
        json.dumps(
            {
                "mcpServers": {
                    "everything": {"command": paths["NODE22"], "args": [paths["EVERYTHING_JS"], "stdio"]},
                    "demo": {"command": demo_server()[0], "args": demo_server()[1:]},
                }
            }
        )
    )
    sock = tmp_path / "run" / "s.sock"
    s = _start(
        tmp_path, "--config", str(config), "--socket", str(sock), "--exclude-tools", "demo:crash,get-env"
    )
    try:
        listing = s.shim()
        assert "everything echo" in listing.stdout and "demo echo" in listing.stdout
        assert "demo crash" not in listing.stdout and "get-env" not in listing.stdout
        echoed = s.shim("everything", "echo", "--message", "hi")
        assert echoed.returncode == 0 and echoed.stdout.strip() == "Echo: hi"
        summed = s.shim("everything", "get-sum", "--a", "2", "--b", "40")
        assert "42" in summed.stdout
        wait_for(lambda: s.stats.exists() and len(s.stats.read_text().splitlines()) == 2, what="stats lines")
    finally:
        s.stop()


def test_a_repeated_call_prints_its_data_on_stdout_every_time_for_jq(session: Session) -> None:
    # Bash mode: stdout always carries the result's data; a dedup pointer there (or nothing) would
    # make `| jq` see empty input, and an agent conclude "no match".
    env = session.env
    script = "mcpsq demo list-rows --table dup | jq length"
    shim_dir = Path(sys.executable).parent
    env = {**env, "PATH": f"{_shim_bin(session)}:{shim_dir}:{env['PATH']}"}
    counts = [
        subprocess.run(["bash", "-c", script], capture_output=True, text=True, env=env, timeout=60)
        for _ in range(3)
    ]
    assert [c.returncode for c in counts] == [0, 0, 0], [c.stderr for c in counts]
    assert counts[0].stdout.strip() and counts[0].stdout == counts[1].stdout == counts[2].stdout
    assert all("identical" not in c.stdout for c in counts)
    big = [session.shim("demo", "search-issues", "--query", "same") for _ in range(2)]
    assert big[0].stdout == big[1].stdout.replace(
        json.loads(big[1].stdout)["truncation"]["response_id"],
        json.loads(big[0].stdout)["truncation"]["response_id"],
    ).replace(
        json.loads(big[1].stdout)["truncation"]["original_response_file"],
        json.loads(big[0].stdout)["truncation"]["original_response_file"],
    )


def _shim_bin(session: Session) -> Path:
    """A directory with an `mcpsq` command that runs this tree's shim."""
    bindir = session.recovery.parent / "bin"
    bindir.mkdir(exist_ok=True)
    shim = bindir / "mcpsq"
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m mcpsqueeze.bash.shim "$@"\n')
    shim.chmod(0o755)
    return bindir


def test_malformed_json_input_exits_2_with_a_clear_message(session: Session) -> None:
    for bad in ("{bad", '{"page_id": "x"', '"open'):
        done = session.shim("demo", "kitchen-sink", "--json", bad)
        assert done.returncode == 2, done.stderr
        assert "--json is not valid JSON" in done.stderr and "Traceback" not in done.stderr


def test_the_pointer_offered_in_the_notice_resolves_for_an_array_result(session: Session) -> None:
    import re

    done = session.shim("demo", "list-rows", "--table", "big", "--n", "2000")
    assert done.returncode == 0 and isinstance(json.loads(done.stdout), list)
    offered = re.search(r"--pointer (\S+?)\.?$", done.stderr.strip())
    rid = re.search(r"mcpsq recover ([0-9a-f]{32})", done.stderr)
    assert offered and rid, done.stderr
    part = session.shim("recover", rid.group(1), "--pointer", offered.group(1))
    assert part.returncode == 0, part.stderr


def test_a_server_named_time_is_callable_as_mcp_time_through_installed_commands(tmp_path: Path) -> None:
    s = _start(tmp_path, "--socket", str(tmp_path / "run" / "s.sock"), "-n", "time", "--", *demo_server())
    try:
        installed = subprocess.run(
            cli("install-commands", str(tmp_path / "bin")),
            capture_output=True,
            text=True,
            env=s.env,
            timeout=60,
        )
        assert installed.returncode == 0, installed.stderr
        assert installed.stdout.strip() == str(tmp_path / "bin" / "mcp-time")
        assert "shell keyword" in installed.stderr and "mcpsq time" in installed.stderr
        entry = tmp_path / "bin" / "mcp-time"
        # The entry point runs with -I (no PYTHONPATH); here it must run the tree under test.
        entry.write_text(entry.read_text().replace(" -I -c ", " -c "))
        env = {**s.env, "PATH": f"{tmp_path / 'bin'}:{s.env['PATH']}"}
        done = subprocess.run(
            ["bash", "-c", "mcp-time echo --text hi && mcp-time echo"],
            capture_output=True,
            text=True,
            env=env,
        )
        assert done.stdout == "hi", done.stderr
        assert "mcp-time echo" in done.stderr  # the usage error names the command that works
    finally:
        s.stop()


# -- SIGTERM with a call to a hung backend in flight


HUNG = Path(__file__).parents[1] / "fixtures" / "hung_backend.py"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    stat = Path(f"/proc/{pid}/stat")
    return not (stat.exists() and stat.read_text().split(") ")[-1].startswith("Z"))


def test_sigterm_ends_serve_within_the_grace_period_while_a_call_to_a_hung_backend_is_in_flight(
    tmp_path: Path,
) -> None:
    sock = tmp_path / "run" / "s.sock"
    marker = tmp_path / "called"
    argv = cli(
        "serve", "--recovery-dir", str(tmp_path / "rec"), "--socket", str(sock),
        "-n", "hung", "--", sys.executable, str(HUNG), str(marker),
    )  # fmt: skip
    serve = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    assert serve.stderr is not None
    serve_ready(serve)
    env = {**os.environ, "MCPSQUEEZE_SOCKET": str(sock)}
    shim = subprocess.Popen(
        [sys.executable, "-m", "mcpsqueeze.bash.shim", "hung", "hang"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        backend_pid = int(wait_for(lambda: marker.exists() and marker.read_text(), 30, "the call in flight"))
        started = time.monotonic()
        serve.send_signal(signal.SIGTERM)
        code = serve.wait(timeout=30)
        took = time.monotonic() - started
        err = serve.stderr.read()
        shim_code = shim.wait(timeout=30)
    finally:
        for proc in (serve, shim):
            if proc.poll() is None:
                proc.kill()
    print(f"serve exited {took:.2f} s after SIGTERM")
    assert code == 0
    # No tool call completed, so there is nothing to sum up (quiet when nothing was proxied).
    assert "mcpsqueeze session summary:" not in err
    assert shim_code in (3, 4)  # the call is refused or reported, never left hanging
    wait_for(lambda: not _alive(backend_pid), 10, "the hung backend to be gone")
