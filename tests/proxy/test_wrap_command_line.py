"""`wrap`'s command line: where the server command starts, and what the proxy says on stderr. The CLI's own
parser and session, in this process (memwrap); a backend that cannot start: test_wrap_stdio.py; a real
server's own options after its command: test_public_servers.py."""

from __future__ import annotations

import re
from pathlib import Path

from memwrap import MemoryWrap, run_cli, wrap_settings
from rawclient import demo_server

RESPONSE_ID = re.compile(r"response ([0-9a-f]{32})")


def _proxy(tmp_path: Path, *extra: str) -> MemoryWrap:
    return MemoryWrap(["--recovery-dir", str(tmp_path / "rec"), *extra])


def test_options_after_the_command_belong_to_the_server_even_when_wrap_has_them_too() -> None:
    # `-m` and `--transport stdio` go to python and the demo server; wrap's own --transport stays stdio.
    settings = wrap_settings(
        ["--budget", "2000", "--transport", "streamable-http", *demo_server(), "--port", "9"]
    )
    assert settings.target == [*demo_server(), "--port", "9"]
    assert settings.transport == "streamable-http" and settings.port != 9


def test_an_unknown_option_before_the_command_is_a_usage_error() -> None:
    done = run_cli("wrap", "--bogus", *demo_server())
    assert done.returncode == 2
    assert "No such option '--bogus'" in done.stderr


def test_no_summary_when_no_tool_was_called(tmp_path: Path) -> None:
    with _proxy(tmp_path) as client:
        client.initialize()
        client.result("tools/list")
        assert client.close() == 0
    assert "summary" not in client.stderr


def test_quiet_drops_the_summary_after_calls(tmp_path: Path) -> None:
    with _proxy(tmp_path, "--quiet") as client:
        client.initialize()
        client.call("echo", {"text": "x"})
        assert client.close() == 0
    assert "summary" not in client.stderr


def test_log_level_info_writes_one_line_per_shrunk_and_per_deduplicated_call(tmp_path: Path) -> None:
    with _proxy(tmp_path, "--budget", "2000", "--log-level", "info") as client:
        client.initialize()
        client.call("echo", {"text": "small"})
        shrunk = client.call("list_rows", {"table": "t"})
        client.call("list_rows", {"table": "t"})
        assert client.close() == 0
    lines = [line for line in client.stderr.splitlines() if " call #" in line]
    assert len(lines) == 2, client.stderr  # the small echo is not worth a line
    first, second = lines
    assert first.startswith("mcpsqueeze: shrunk list_rows call #2")
    assert second.startswith("mcpsqueeze: deduplicated list_rows call #3")
    assert RESPONSE_ID.search(first)[1] == shrunk["_meta"]["truncation"]["response_id"]  # type: ignore[index]
    chars = re.search(r"(\d+) -> (\d+) chars, (\d+) -> (\d+) tokens", first)
    assert chars is not None
    before, after, tokens_before, tokens_after = map(int, chars.groups())
    assert after <= 2000 < before and tokens_after < tokens_before
