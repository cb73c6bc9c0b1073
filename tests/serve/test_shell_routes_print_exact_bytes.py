"""Every shell route prints the same bytes for the same data, exactly: a tool call, the same call with
`--full` and `mcpsq recover ID` print the original text with nothing added; `--pointer` and `--query`
print their part exactly. (The documented `jq -rj` recipe prints the same: tests/bash/test_recover_recipes.py;
on a terminal the shim ends a line the data left open: tests/bash/test_shim.py.)"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from memwrap import Serve, mcpsq
from rawclient import demo_server

ID_RE = re.compile(r"mcpsq recover ([0-9a-f]{32})")


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    tmp = tmp_path_factory.mktemp("routes")
    sock = tmp / "run" / "s.sock"
    args = ["--recovery-dir", str(tmp / "rec"), "--budget", "4000", "--socket", str(sock)]
    with Serve([*args, "-n", "demo", "--", *demo_server()]):
        yield {**os.environ, "MCPSQUEEZE_SOCKET": str(sock), "MCPSQUEEZE_RECOVERY_DIR": str(tmp / "rec")}


def _mcpsq(env: dict[str, str], *args: str) -> bytes:
    done = mcpsq(args, env)
    assert done.returncode == 0, done.stderr
    return done.out


def test_a_call_its_full_form_and_the_recovery_print_the_same_bytes(env: dict[str, str]) -> None:
    shrunk = mcpsq(["demo", "search-issues", "--query", "exact bytes"], env)
    match = ID_RE.search(shrunk.stderr)
    assert match, shrunk.stderr
    rid = match.group(1)
    file = Path(env["MCPSQUEEZE_RECOVERY_DIR"]) / f"mcpsqueeze-{rid}.json"
    original = json.loads(file.read_text(encoding="utf-8"))["content"][0]["text"].encode()
    assert not original.endswith(b"\n")  # the case where a route could add one
    full = _mcpsq(env, "demo", "search-issues", "--query", "exact bytes", "--full")
    recovered = _mcpsq(env, "recover", rid)
    assert full == recovered == original
    issue = json.loads(original)["issues"][0]
    pointed = _mcpsq(env, "recover", rid, "--pointer", "/issues/0/title")
    assert pointed == issue["title"].encode()
    queried = _mcpsq(env, "recover", rid, "--query", "issues[0].{key: key}")
    assert json.loads(queried) == {"key": issue["key"]} and not queried.endswith(b"\n")
    assert _mcpsq(env, "demo", "echo", "--text", "no newline") == b"no newline"
