"""The Just-Bash plugin with a real AsyncBash (the machine's Node): commands, pipes, /recovery, escapes."""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

pytest.importorskip("just_bash")
if shutil.which("node") is None:
    pytest.skip("Just-Bash needs Node on PATH", allow_module_level=True)

from just_bash import AsyncBash, InMemoryFs

from mcpsqueeze._errors import UsageError
from mcpsqueeze.bash import AsyncSessionClient, SessionAddress, SessionClient, install_into, open_bash

from .canned_session import Session

pytestmark = pytest.mark.anyio
ID_RE = re.compile(r"mcpsq recover ([0-9a-f]{32})")


@pytest.fixture
async def bash(session: Session, rec_dir: Path) -> AsyncIterator[AsyncBash]:
    api = AsyncSessionClient(SessionClient(SessionAddress(socket_path=str(session.socket_path))))
    shell = await open_bash(api)
    try:
        yield shell
    finally:
        await shell.close()


async def test_tools_are_commands_whose_output_pipes_into_jq(bash: AsyncBash) -> None:
    done = await bash.exec("demo search-issues --query crash --limit 30 | jq -r '.issues[0].title'")
    assert (done.exit_code, done.stdout) == (0, "crash issue 0\n")
    assert done.stderr.startswith("mcpsqueeze: Shrunk from")
    assert "/recovery/mcpsqueeze-" in done.stderr  # the path the agent can open, not the host's


async def test_flags_help_and_exit_codes_match_the_shim(bash: AsyncBash) -> None:
    echoed = await bash.exec("demo kitchen-sink --page-id p --tags a --tags '[\"b\"]' --verbose true")
    assert json.loads(echoed.stdout) == {"page_id": "p", "tags": ["a", "b"], "verbose": True}
    helped = await bash.exec("demo kitchen-sink --help")
    golden = (Path(__file__).parent / "golden" / "kitchen_sink_help.txt").read_text()
    assert helped.stdout == golden.replace("mcpsq demo kitchen-sink", "demo kitchen-sink")
    codes = await bash.exec(
        "demo fail --message no 2>/dev/null; a=$?; demo kitchen-sink 2>/dev/null; b=$?; "
        "demo crash 2>/dev/null; c=$?; github x 2>/dev/null; d=$?; echo $a $b $c $d"
    )
    assert codes.stdout == "1 2 4 4\n"


async def test_json_input_comes_from_the_pipe(bash: AsyncBash) -> None:
    done = await bash.exec('echo \'{"text": "piped"}\' | demo echo --json -')
    assert (done.exit_code, done.stdout) == (0, "piped")


async def test_mcpsq_lists_the_tools_inside_the_shell(bash: AsyncBash) -> None:
    done = await bash.exec("mcpsq | grep -c '^demo '")
    assert done.stdout == "15\n"


async def test_recovery_files_are_readable_under_recovery_and_by_mcpsq_recover(bash: AsyncBash) -> None:
    shrunk = await bash.exec("demo search-issues --query q --limit 12 >/dev/null")
    match = ID_RE.search(shrunk.stderr)
    assert match is not None
    rid = match.group(1)
    via_jq = await bash.exec(
        f"jq -rj '.content[0].text' /recovery/mcpsqueeze-{rid}.json | jq '.issues | length'"
    )
    by_id = await bash.exec(f"mcpsq recover {rid} --pointer /issues/11/number")
    by_path = await bash.exec(f"cd /recovery && mcpsq recover ./mcpsqueeze-{rid}.json | jq .total_count")
    assert (via_jq.stdout, by_id.stdout, by_path.stdout) == ("12\n", "1011", "12\n")  # recover: exact


async def test_mcpsq_recover_reads_exact_lines_and_queries_inside_the_shell(
    bash: AsyncBash, rec_dir: Path
) -> None:
    rid = "ab" * 16
    text = "".join(f"line {n}\r\n" if n % 3 else f"line {n}\n" for n in range(1, 41))
    issues = json.dumps({"issues": [{"key": "A-1"}, {"key": "A-2"}]})
    original = {"content": [{"type": "text", "text": text}, {"type": "text", "text": issues}]}
    (rec_dir / f"mcpsqueeze-{rid}.json").write_text(json.dumps(original))
    lines = await bash.exec(f"mcpsq recover {rid} --lines 11-13")
    assert (lines.exit_code, lines.stdout) == (0, "line 11\r\nline 12\nline 13\r\n")
    last = await bash.exec(f"mcpsq recover {rid} --lines=42-")  # line 41 is the newline joining the blocks
    assert (last.exit_code, last.stdout) == (0, issues)
    found = await bash.exec(f"mcpsq recover {rid} --grep '^LINE 1[23]\\b' -i --context 0")
    header = "2 of 42 lines match grep /^LINE 1[23]\\b/i (N: a match, N- context):\n"
    assert (found.exit_code, found.stdout) == (0, header + "12:line 12\n13:line 13\n")
    other = "cd" * 16
    (rec_dir / f"mcpsqueeze-{other}.json").write_text(json.dumps({"content": [original["content"][1]]}))
    keys = await bash.exec(f"mcpsq recover {other} --query 'issues[].key' | jq -c .")
    assert (keys.exit_code, keys.stdout) == (0, '["A-1","A-2"]\n')


async def test_nothing_of_the_host_is_visible_and_escapes_are_refused(bash: AsyncBash, rec_dir: Path) -> None:
    outside = rec_dir.parent / "outside.json"
    outside.write_text('{"content": [{"type": "text", "text": "host secret"}]}')
    (rec_dir / f"mcpsqueeze-{'ab' * 16}.json").symlink_to(outside)
    (rec_dir / "up").symlink_to(rec_dir.parent)
    attempts = [
        "cat /etc/passwd",
        "cat /recovery/../../etc/passwd",
        f"cat /recovery/mcpsqueeze-{'ab' * 16}.json",
        "cat /recovery/up/outside.json",
        f"cat {outside}",
        f"mcpsq recover {'ab' * 16}",
        "mcpsq recover /etc/passwd",
        "mcpsq recover /recovery/../etc/passwd",
        f"mcpsq recover {outside}",
        "mcpsq recover up/outside.json",
    ]
    for command in attempts:
        done = await bash.exec(command)
        assert done.exit_code != 0, command
        assert "host secret" not in done.stdout and "root:" not in done.stdout, command
    listing = await bash.exec("ls /")
    assert listing.stdout.split() == ["recovery"]


async def test_writing_to_recovery_is_an_exit_code_not_an_exception(bash: AsyncBash, rec_dir: Path) -> None:
    planted = rec_dir / f"mcpsqueeze-{'cd' * 16}.json"
    planted.write_text('{"content": []}')
    before = sorted(p.name for p in rec_dir.iterdir())
    await bash.exec(f"rm -f /recovery/{planted.name}")  # -f hides the error; the file must survive anyway
    writes = ("echo x > /recovery/new.json", f"rm /recovery/{planted.name}", "mkdir /recovery/d")
    for command in (*writes, f"echo x >> /recovery/{planted.name}", "touch /recovery/t"):
        done = await bash.exec(command)
        assert done.exit_code != 0, command
    assert sorted(p.name for p in rec_dir.iterdir()) == before
    assert planted.read_text() == '{"content": []}'
    after = await bash.exec("echo still-alive")
    assert after.stdout == "still-alive\n"


async def test_an_unreachable_session_is_exit_3_inside_the_shell(bash: AsyncBash, session: Session) -> None:
    assert session.socket_path is not None
    session.socket_path.unlink()
    done = await bash.exec("demo echo --text x")
    assert done.exit_code == 3 and "mcpsqueeze serve" in done.stderr


async def test_install_into_adds_the_commands_and_mount_to_the_hosts_own_shell(
    session: Session, rec_dir: Path
) -> None:
    api = AsyncSessionClient(SessionClient(SessionAddress(socket_path=str(session.socket_path))))
    shell = AsyncBash(fs=InMemoryFs(files={"/work/notes.txt": "mine\n"}), cwd="/work")
    added = await install_into(shell, api)
    try:
        assert set(added) == {"mcpsq", "demo", "github"}
        done = await shell.exec("cat notes.txt; demo echo --text hi; ls /recovery >/dev/null && echo mounted")
        assert done.stdout == "mine\nhimounted\n"  # a tool's text exactly, as printf would print it
        with pytest.raises(Exception, match="has not run anything yet"):
            await install_into(shell, api)
    finally:
        await shell.close()


async def test_a_server_named_like_a_shell_word_gets_a_prefixed_command_and_a_warning(
    session: Session, rec_dir: Path, caplog: pytest.LogCaptureFixture
) -> None:
    from mcpsqueeze.bash.just_bash import bash_commands

    api = AsyncSessionClient(SessionClient(SessionAddress(socket_path=str(session.socket_path))))
    with caplog.at_level("WARNING", logger="mcpsqueeze.bash.just_bash"):
        table = bash_commands(api, rec_dir, ["time", "echo", "demo"])
    assert {"mcp-time", "mcp-echo", "demo", "mcpsq"} == set(table)
    assert "mcp-time" in caplog.text and "keyword" in caplog.text
    async with AsyncBash(custom_commands=table) as shell:
        done = await shell.exec("echo plain; mcp-time --help")
    assert done.stdout.startswith("plain\n")  # the shell's echo is not hidden
    assert "mcp-time" in done.stderr  # the canned session has no server `time`; the command names itself


async def test_open_bash_works_in_async_with_as_documented_and_awaited(
    session: Session, rec_dir: Path
) -> None:
    api = AsyncSessionClient(SessionClient(SessionAddress(socket_path=str(session.socket_path))))
    async with open_bash(api) as shell:  # the documented form
        done = await shell.exec("demo echo --text with")
        assert (done.exit_code, done.stdout) == (0, "with")
    assert shell.closed
    async with await open_bash(api) as shell:  # the form that already worked
        assert (await shell.exec("demo echo --text awaited")).stdout == "awaited"
    assert shell.closed
    opening = open_bash(api)
    shell = await opening
    try:
        with pytest.raises(UsageError, match="already opened"):
            await opening
    finally:
        await shell.close()
