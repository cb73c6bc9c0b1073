"""The `mcpsq` shim as a real process: against a real HTTP session on a Unix socket (canned answers), on
a terminal, as the entry points `install-commands` writes, and what a fresh interpreter loads for it (standard library only, nothing heavy imported on a
tool call; the package it imports and the recovery reader it runs for `recover` stay cheap too).
What the shim's command does with a real session runs in process elsewhere (memwrap.mcpsq)."""

from __future__ import annotations

import json
import os
import pty
import re
import subprocess
import sys
from pathlib import Path

import pytest

from mcpsqueeze.bash import install_commands
from mcpsqueeze.bash._session_http import SessionAddress, SessionClient, default_socket_candidates
from mcpsqueeze.bash.shim import run

from .canned_session import Session, serve_tcp
from .conftest import SHIM

ID_RE = re.compile(r"mcpsq recover ([0-9a-f]{32})")


def mcpsq(env: dict[str, str], *argv: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*SHIM, *argv], env=env, input=stdin, capture_output=True, text=True, timeout=30)


def calls(session: Session) -> list[dict[str, object]]:
    return [r["body"] for r in session.requests if r["path"] == "/v1/call"]


def test_bare_mcpsq_lists_servers_and_tools_and_exits_0(shim_env: dict[str, str]) -> None:
    done = mcpsq(shim_env)
    assert done.returncode == 0, done.stderr
    assert "demo kitchen-sink    Echo every argument as JSON;" in done.stdout
    assert "github  (down: spawn failed: github-mcp not found;" in done.stdout
    assert done.stderr == ""


def test_a_call_with_every_kind_of_flag_sends_typed_arguments_and_prints_the_text(
    shim_env: dict[str, str], session: Session
) -> None:
    done = mcpsq(
        shim_env, "demo", "kitchen-sink", "--page-id", "p1", "--page-size", "5", "--ratio", "0.75",
        "--no-verbose", "--tags", "a", "--tags", '["b"]', "--filter", '{"x": [1]}', "--mode=slow",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    sent = {"page_id": "p1", "pageSize": 5, "ratio": 0.75, "verbose": False, "tags": ["a", "b"]}
    sent |= {"filter": {"x": [1]}, "mode": "slow"}
    assert calls(session) == [{"server": "demo", "tool": "kitchen_sink", "arguments": sent, "full": False}]
    assert json.loads(done.stdout) == sent
    assert done.stderr == ""


def test_json_from_stdin_is_the_whole_input(shim_env: dict[str, str], session: Session) -> None:
    done = mcpsq(shim_env, "demo", "echo", "--json", "-", stdin='{"text": "héllo"}')
    assert (done.returncode, done.stdout) == (0, "héllo")


def test_a_shrunk_result_is_valid_json_on_stdout_with_a_one_line_notice_on_stderr(
    shim_env: dict[str, str], session: Session, rec_dir: Path
) -> None:
    done = mcpsq(shim_env, "demo", "search-issues", "--query", "bug", "--limit", "50")
    assert done.returncode == 0, done.stderr
    preview = json.loads(done.stdout)
    assert len(preview["issues"]) == 3
    assert done.stderr.count("\n") == 1 and done.stderr.startswith("mcpsqueeze: Shrunk from")
    match = ID_RE.search(done.stderr)
    assert match is not None
    assert str(rec_dir / f"mcpsqueeze-{match.group(1)}.json") in done.stderr


def test_full_asks_the_session_for_the_unshrunk_result(shim_env: dict[str, str], session: Session) -> None:
    done = mcpsq(shim_env, "demo", "search-issues", "--query", "bug", "--limit", "50", "--full")
    assert calls(session)[0]["full"] is True
    assert len(json.loads(done.stdout)["issues"]) == 50
    assert done.stderr == ""


def test_raw_prints_the_whole_result_envelope_as_json(shim_env: dict[str, str]) -> None:
    done = mcpsq(shim_env, "demo", "search-issues", "--query", "bug", "--limit", "10", "--raw")
    envelope = json.loads(done.stdout)
    assert set(envelope) == {"content", "isError", "_meta"}
    assert envelope["_meta"]["truncation"]["response_id"]
    assert done.stderr == ""


def test_a_tool_error_goes_to_stderr_with_exit_1(shim_env: dict[str, str]) -> None:
    done = mcpsq(shim_env, "demo", "fail", "--message", "the tracker is read-only")
    assert (done.returncode, done.stdout, done.stderr) == (1, "", "the tracker is read-only\n")


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (
            ["demo", "kitchen-sink"],
            "missing required --page-id (string); see `mcpsq demo kitchen-sink --help`",
        ),
        (["demo", "kitchen-sink", "--page-id", "p", "--mode", "x"], "--mode expects one of: fast, slow"),
        (["demo", "serch-issues"], "did you mean search-issues? run `mcpsq demo --help`"),
        (["nope", "x"], "no server named 'nope'"),
    ],
)
def test_usage_errors_exit_2_without_calling_the_backend(
    shim_env: dict[str, str], session: Session, argv: list[str], needle: str
) -> None:
    done = mcpsq(shim_env, *argv)
    assert done.returncode == 2
    assert needle in done.stderr
    assert calls(session) == []


def test_backend_failure_and_timeout_exit_4_and_say_what_to_do(shim_env: dict[str, str]) -> None:
    crashed = mcpsq(shim_env, "demo", "crash")
    slow = mcpsq(shim_env, "demo", "sleep", "--seconds", "9")
    assert (crashed.returncode, slow.returncode) == (4, 4)
    assert "the backend failed (the backend demo exited with status 3). Retry;" in crashed.stderr
    assert "did not answer in time" in slow.stderr


def test_a_down_server_exits_4(shim_env: dict[str, str]) -> None:
    done = mcpsq(shim_env, "github", "search-issues")
    assert done.returncode == 4
    assert "is down (spawn failed: github-mcp not found)" in done.stderr


def test_no_session_exits_3_and_says_how_to_start_one(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MCPSQUEEZE_")}
    env["MCPSQUEEZE_SOCKET"] = str(tmp_path / "missing.sock")
    done = mcpsq(env, "demo", "echo", "--text", "x")
    assert done.returncode == 3
    assert "mcpsqueeze serve" in done.stderr and "MCPSQUEEZE_SOCKET" in done.stderr


def test_mcpsq_help_without_a_session_prints_the_usage_and_exits_0(
    tmp_path: Path, shim_env: dict[str, str]
) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MCPSQUEEZE_")}
    for where in ({"MCPSQUEEZE_SOCKET": str(tmp_path / "missing.sock")}, {"XDG_RUNTIME_DIR": str(tmp_path)}):
        for word in ("--help", "-h", "help"):
            done = mcpsq({**env, **where}, word)
            assert (done.returncode, done.stderr) == (0, ""), done.stderr
            assert done.stdout.startswith("Usage: mcpsq SERVER TOOL [--flag value ...]")
            assert "\nNo tools to list: " in done.stdout and "Start the session with" in done.stdout
            assert done.stdout.endswith("3 session unreachable, 4 backend failure or timeout.\n")
    with_session = mcpsq(shim_env, "--help")  # a session: the listing, as before
    assert with_session.returncode == 0 and "demo kitchen-sink" in with_session.stdout
    assert (
        mcpsq({**env, "MCPSQUEEZE_SOCKET": str(tmp_path / "missing.sock")}, "demo", "--help").returncode == 3
    )


def test_tool_help_is_printed_without_calling_the_tool(shim_env: dict[str, str], session: Session) -> None:
    done = mcpsq(shim_env, "demo", "kitchen-sink", "--help")
    golden = (Path(__file__).parent / "golden" / "kitchen_sink_help.txt").read_text()
    assert (done.returncode, done.stdout) == (0, golden)
    assert calls(session) == []


def test_recover_prints_the_original_by_id_by_path_and_by_pointer(
    shim_env: dict[str, str], session: Session, rec_dir: Path
) -> None:
    shrunk = mcpsq(shim_env, "demo", "search-issues", "--query", "bug", "--limit", "40")
    match = ID_RE.search(shrunk.stderr)
    assert match is not None
    rid = match.group(1)
    by_id = mcpsq(shim_env, "recover", rid)
    by_path = mcpsq(shim_env, "recover", str(rec_dir / f"mcpsqueeze-{rid}.json"))
    pointer = mcpsq(shim_env, "recover", rid, "--pointer", "/issues/39/title")
    raw = mcpsq(shim_env, "recover", rid, "--raw")
    assert len(json.loads(by_id.stdout)["issues"]) == 40
    assert by_path.stdout == by_id.stdout
    assert (pointer.returncode, pointer.stdout) == (0, "bug issue 39")  # exact: no newline added
    assert json.loads(raw.stdout)["content"][0]["type"] == "text"


def test_recover_uses_the_recovery_dir_from_the_environment_without_a_session(
    rec_dir: Path, tmp_path: Path
) -> None:
    rid = "ab" * 16
    (rec_dir / f"mcpsqueeze-{rid}.json").write_text(
        '{"content": [{"type": "text", "text": "[1, {\\"a\\": 2}]"}]}'
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("MCPSQUEEZE_")}
    env |= {"MCPSQUEEZE_RECOVERY_DIR": str(rec_dir), "MCPSQUEEZE_SOCKET": str(tmp_path / "none.sock")}
    done = mcpsq(env, "recover", rid, "--pointer", "/1")
    assert (done.returncode, done.stdout) == (0, '{"a":2}')  # a JSON node: compact, as previews show JSON


def test_recover_refuses_escapes_and_odd_files_with_exit_2(
    shim_env: dict[str, str], rec_dir: Path, tmp_path: Path
) -> None:
    secret = tmp_path / "secret.json"
    secret.write_text('{"content": [{"type": "text", "text": "secret"}]}')
    (rec_dir / f"mcpsqueeze-{'cd' * 16}.json").symlink_to(secret)
    (rec_dir / "linked").symlink_to(tmp_path)
    os.mkfifo(rec_dir / f"mcpsqueeze-{'ef' * 16}.json")
    for ref in (
        "/etc/passwd",
        "../../etc/passwd",
        f"{rec_dir}/../secret.json",
        "cd" * 16,
        f"{rec_dir}/linked/secret.json",
        "ef" * 16,
    ):
        done = mcpsq(shim_env, "recover", ref)
        assert done.returncode == 2, ref
        assert "secret" not in done.stdout
        assert "Refused to read" in done.stderr, (ref, done.stderr)


def test_tcp_with_the_right_token_file_works_and_a_wrong_token_exits_3_without_a_backend_call(
    tmp_path: Path, rec_dir: Path
) -> None:
    token_file = tmp_path / "token"
    token_file.write_text("f" * 64)
    session = Session(rec_dir, token="f" * 64)
    with serve_tcp(session) as (served, port):
        env = {k: v for k, v in os.environ.items() if not k.startswith("MCPSQUEEZE_")}
        env |= {"MCPSQUEEZE_URL": f"http://127.0.0.1:{port}", "MCPSQUEEZE_TOKEN_FILE": str(token_file)}
        ok = mcpsq(env, "demo", "echo", "--text", "hi")
        token_file.write_text("0" * 64)
        refused = mcpsq(env, "demo", "echo", "--text", "hi")
    assert (ok.returncode, ok.stdout) == (0, "hi")
    assert refused.returncode == 3 and "MCPSQUEEZE_TOKEN_FILE" in refused.stderr
    assert "0" * 64 not in refused.stderr and "f" * 64 not in ok.stderr
    assert len([r for r in served.requests if r["path"] == "/v1/call"]) == 1


def test_a_non_loopback_url_is_refused_before_any_token_is_sent(tmp_path: Path) -> None:
    outcome = run(["demo", "echo"], {"MCPSQUEEZE_URL": "http://example.com:80"})
    assert outcome.code == 2 and "loopback" in outcome.stderr


def test_a_dedup_pointer_from_the_session_still_prints_the_data_on_stdout(
    shim_env: dict[str, str],
) -> None:
    first = mcpsq(shim_env, "demo", "list-rows", "--table", "t", "--n", "20")
    second = mcpsq(shim_env, "demo", "list-rows", "--table", "t", "--n", "20")
    assert len(json.loads(first.stdout)) == 20 and first.stderr == ""
    # A pointer instead of data (another session's answer): the shim prints the original instead.
    assert second.returncode == 0 and second.stdout == first.stdout
    assert second.stderr.startswith("mcpsqueeze: identical to the result of call #1 (list_rows)")
    match = ID_RE.search(second.stderr)
    assert match is not None
    assert len(json.loads(mcpsq(shim_env, "recover", match.group(1)).stdout)) == 20


def test_run_in_process_gives_the_same_outcome_as_the_process(shim_env: dict[str, str]) -> None:
    outcome = run(["demo", "image"], shim_env)
    assert (outcome.code, outcome.stdout) == (0, "An 8x8 gradient PNG.")
    assert "an image block (image/png" in outcome.stderr


def test_the_client_handles_chunked_answers(tmp_path: Path) -> None:
    import socket
    import threading

    path = tmp_path / "chunked.sock"
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(path))
    server.listen(1)

    def answer() -> None:
        conn, _ = server.accept()
        conn.recv(65536)
        conn.sendall(
            b'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n{"a":\r\n2\r\n1}\r\n0\r\n\r\n'
        )
        conn.close()

    thread = threading.Thread(target=answer)
    thread.start()
    status, body = SessionClient(SessionAddress(socket_path=str(path))).request("GET", "/v1/health")
    thread.join()
    server.close()
    assert (status, body) == (200, {"a": 1})


def test_default_socket_candidates_follow_platformdirs_runtime_lookup_then_the_cache_dir() -> None:
    uid = os.geteuid()
    env = {"XDG_RUNTIME_DIR": "/run/user/77", "HOME": "/home/u", "TMPDIR": "/var/tmp"}
    assert default_socket_candidates(env) == [
        "/run/user/77/mcpsqueeze/session.sock",
        f"/run/user/{uid}/mcpsqueeze/session.sock",
        f"/var/tmp/runtime-{uid}/mcpsqueeze/session.sock",
        "/home/u/.cache/mcpsqueeze/session.sock",
        "/run/mcpsqueeze/session.sock",
    ]


def test_the_runtime_dir_platformdirs_picks_here_is_among_the_candidates() -> None:
    import warnings

    import platformdirs

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        runtime = platformdirs.PlatformDirs("mcpsqueeze", ensure_exists=False).user_runtime_dir
    assert os.path.join(runtime, "session.sock") in default_socket_candidates(os.environ)


def test_recover_lines_prints_exactly_the_lines_a_fold_marker_names(rec_dir: Path, tmp_path: Path) -> None:
    rid = "a1" * 16
    original = {"content": [{"type": "text", "text": "one\ntwo\nthree"}, {"type": "text", "text": "four\n"}]}
    (rec_dir / f"mcpsqueeze-{rid}.json").write_text(json.dumps(original))
    env = {k: v for k, v in os.environ.items() if not k.startswith("MCPSQUEEZE_")}
    env |= {"MCPSQUEEZE_RECOVERY_DIR": str(rec_dir), "MCPSQUEEZE_SOCKET": str(tmp_path / "none.sock")}
    middle = mcpsq(env, "recover", rid, "--lines", "2-4")
    tail = mcpsq(env, "recover", rid, "--lines=4-")
    past = mcpsq(env, "recover", rid, "--lines", "9-10")
    both = mcpsq(env, "recover", rid, "--lines", "1", "--pointer", "/a")
    assert (middle.returncode, middle.stdout) == (0, "two\nthree\nfour\n")  # blocks joined by a newline
    assert (tail.returncode, tail.stdout) == (0, "four\n")
    assert past.returncode == 2 and "has 4 line(s)" in past.stderr
    assert both.returncode == 2 and "not both" in both.stderr


def test_recover_offset_and_length_print_exactly_the_characters_a_chars_marker_names(
    rec_dir: Path, tmp_path: Path
) -> None:
    rid = "b2" * 16
    original = {"content": [{"type": "text", "text": "<p>café one</p>"}, {"type": "text", "text": "two"}]}
    (rec_dir / f"mcpsqueeze-{rid}.json").write_text(json.dumps(original))
    env = {k: v for k, v in os.environ.items() if not k.startswith("MCPSQUEEZE_")}
    env |= {"MCPSQUEEZE_RECOVERY_DIR": str(rec_dir), "MCPSQUEEZE_SOCKET": str(tmp_path / "none.sock")}
    window = mcpsq(env, "recover", rid, "--offset", "3", "--length", "8")
    rest = mcpsq(env, "recover", rid, "--offset=16")
    assert (window.returncode, window.stdout) == (0, "café one")  # characters, not bytes
    assert (rest.returncode, rest.stdout) == (0, "two")  # in the blocks joined by a newline


def test_every_shell_door_reads_the_listing_answer_one_way() -> None:
    """`listing_of` is what the shim and both Just-Bash paths make of `GET /v1/servers`: a listing, the
    session's refusal, or a reply that is not JSON named as such (never "the backend failed (HTTP 200)")."""
    from mcpsqueeze._errors import EXIT_BACKEND, EXIT_UNREACHABLE
    from mcpsqueeze.bash._catalog import Catalog
    from mcpsqueeze.bash._core import Printout, listing_of

    listing = listing_of(200, {"servers": [{"name": "demo", "tools": [{"name": "search"}]}]})
    assert isinstance(listing, Catalog)
    assert [s.name for s in listing.servers] == ["demo"]
    odd = listing_of(200, "<html>")
    assert isinstance(odd, Printout) and odd.code == EXIT_BACKEND and "without JSON" in odd.stderr
    refused = listing_of(401, {"error": {"code": "unauthorized", "message": "bad token"}})
    assert isinstance(refused, Printout) and refused.code == EXIT_UNREACHABLE and "token" in refused.stderr


def test_on_a_terminal_the_shim_ends_the_line_the_data_left_open(shim_env: dict[str, str]) -> None:
    """In a pipe the data is exact; on a terminal the prompt starts on its own line."""
    leader, follower = pty.openpty()
    try:
        done = subprocess.run(
            [*SHIM, "demo", "echo", "--text", "no newline"],
            stdout=follower, stderr=subprocess.PIPE, env=shim_env, timeout=60,
        )  # fmt: skip
        os.close(follower)
        seen = b""
        while True:
            try:
                chunk = os.read(leader, 4096)
            except OSError:  # the terminal's other end is closed: all read
                break
            if not chunk:
                break
            seen += chunk
    finally:
        os.close(leader)
    assert done.returncode == 0, done.stderr
    assert seen == b"no newline\r\n"  # the terminal's own line ending


# -- installed entry points, run as commands


def test_entry_points_run_the_servers_tools_by_their_own_name(
    tmp_path: Path, shim_env: dict[str, str], session: Session
) -> None:
    bin_dir = tmp_path / "bin"
    [path] = install_commands(bin_dir, ["demo"], sys.executable)
    assert path == bin_dir / "demo" and path.stat().st_mode & 0o777 == 0o755
    env = shim_env | {"PATH": f"{bin_dir}:{shim_env['PATH']}"}
    done = subprocess.run(
        ["demo", "kitchen-sink", "--page-id", "x", "--tags", "t"], env=env, capture_output=True, text=True
    )
    assert (done.returncode, json.loads(done.stdout)) == (0, {"page_id": "x", "tags": ["t"]})
    helped = subprocess.run(["demo", "kitchen-sink", "--help"], env=env, capture_output=True, text=True)
    assert helped.stdout.startswith("Usage: demo kitchen-sink --page-id STRING [flags]\n")
    missing = subprocess.run(["demo", "kitchen-sink"], env=env, capture_output=True, text=True)
    assert missing.returncode == 2
    assert "see `demo kitchen-sink --help`" in missing.stderr


def test_a_renamed_copy_dispatches_on_its_new_name(tmp_path: Path, shim_env: dict[str, str]) -> None:
    [path] = install_commands(tmp_path / "bin", ["demo"], sys.executable)
    copy = tmp_path / "bin" / "github"
    copy.write_bytes(path.read_bytes())
    copy.chmod(0o755)
    done = subprocess.run([str(copy), "x"], env=shim_env, capture_output=True, text=True)
    assert done.returncode == 4 and "'github' is down" in done.stderr


def test_quotes_in_the_interpreter_path_are_shell_safe(tmp_path: Path) -> None:
    odd = tmp_path / "it's python"
    odd.write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')
    odd.chmod(0o755)
    [path] = install_commands(tmp_path / "bin", ["demo"], str(odd))
    done = subprocess.run(
        [str(path), "--help"],
        env={"PATH": os.environ["PATH"], "MCPSQUEEZE_SOCKET": str(tmp_path / "none")},
        capture_output=True,
        text=True,
    )
    assert done.returncode == 3 and "mcpsqueeze serve" in done.stderr


def test_a_server_named_time_is_installed_as_mcp_time_and_runs_that_server(
    tmp_path: Path, shim_env: dict[str, str], session: Session
) -> None:
    bin_dir = tmp_path / "bin"
    [path] = install_commands(bin_dir, ["time"], sys.executable)
    assert path == bin_dir / "mcp-time" and not (bin_dir / "time").exists()
    # The canned session's server is "demo": a prefixed name that is no shell word resolves to nothing,
    # and the command names itself as typed (the alias itself is pinned in test_names).
    env = shim_env | {"PATH": f"{bin_dir}:{shim_env['PATH']}"}
    done = subprocess.run(["bash", "-c", "mcp-time --help"], env=env, capture_output=True, text=True)
    assert done.returncode == 2 and "mcp-time" in done.stderr, done.stderr


def test_the_installed_prefixed_command_finds_its_session(tmp_path: Path) -> None:
    """A server named like a command on PATH gets `mcp-NAME`, which runs that server's tools."""
    [path] = install_commands(tmp_path / "bin", ["ls"], sys.executable)
    assert path.name == "mcp-ls"
    env = {**os.environ, "MCPSQUEEZE_SOCKET": str(tmp_path / "none.sock")}
    done = subprocess.run([str(path), "--help"], env=env, capture_output=True, text=True)
    assert done.returncode == 3 and "mcpsqueeze serve" in done.stderr
