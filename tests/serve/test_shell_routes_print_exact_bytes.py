"""Every shell route prints the same bytes for the same data, exactly: a tool call, the same call with
`--full`, `mcpsq recover ID` and the documented `jq -rj` recipe on the recovery file print the original
text with nothing added; `--pointer` and `--query` print their part exactly. Only on a terminal does the
shim end a line the data left open, so the prompt starts on its own line. A real serve (in this
process), the shim and jq as processes."""

from __future__ import annotations

import json
import os
import pty
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from memwrap import Serve
from rawclient import demo_server
from seed_recipe import require_jq

ID_RE = re.compile(r"mcpsq recover ([0-9a-f]{32})")


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    tmp = tmp_path_factory.mktemp("routes")
    sock = tmp / "run" / "s.sock"
    args = ["--recovery-dir", str(tmp / "rec"), "--budget", "4000", "--socket", str(sock)]
    with Serve([*args, "-n", "demo", "--", *demo_server()]):
        yield {**os.environ, "MCPSQUEEZE_SOCKET": str(sock), "MCPSQUEEZE_RECOVERY_DIR": str(tmp / "rec")}


def _mcpsq(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[bytes]:
    done = subprocess.run(
        [sys.executable, "-m", "mcpsqueeze.bash.shim", *args], capture_output=True, env=env, timeout=60
    )
    assert done.returncode == 0, done.stderr
    return done


def test_a_call_its_full_form_the_recovery_and_the_jq_recipe_print_the_same_bytes(
    env: dict[str, str],
) -> None:
    require_jq()
    shrunk = _mcpsq(env, "demo", "search-issues", "--query", "exact bytes")
    match = ID_RE.search(shrunk.stderr.decode())
    assert match, shrunk.stderr
    rid = match.group(1)
    file = Path(env["MCPSQUEEZE_RECOVERY_DIR"]) / f"mcpsqueeze-{rid}.json"
    original = json.loads(file.read_text(encoding="utf-8"))["content"][0]["text"].encode()
    assert not original.endswith(b"\n")  # the case where a route could add one
    full = _mcpsq(env, "demo", "search-issues", "--query", "exact bytes", "--full").stdout
    recovered = _mcpsq(env, "recover", rid).stdout
    recipe = subprocess.run(
        ["jq", "-rj", ".content[0].text", str(file)], capture_output=True, check=True
    ).stdout
    assert full == recovered == recipe == original
    issue = json.loads(original)["issues"][0]
    pointed = _mcpsq(env, "recover", rid, "--pointer", "/issues/0/title").stdout
    assert pointed == issue["title"].encode()
    queried = _mcpsq(env, "recover", rid, "--query", "issues[0].{key: key}").stdout
    assert json.loads(queried) == {"key": issue["key"]} and not queried.endswith(b"\n")
    assert _mcpsq(env, "demo", "echo", "--text", "no newline").stdout == b"no newline"


def test_on_a_terminal_the_shim_ends_the_line_the_data_left_open(env: dict[str, str]) -> None:
    leader, follower = pty.openpty()
    try:
        done = subprocess.run(
            [sys.executable, "-m", "mcpsqueeze.bash.shim", "demo", "echo", "--text", "no newline"],
            stdout=follower, stderr=subprocess.PIPE, env=env, timeout=60,
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
