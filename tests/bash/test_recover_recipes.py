"""The `jq` recipes for reading an original, run with the real `jq` (a process, as an agent runs it): the
ones the agent prompt and the container docs give for a recovery file, against what `mcpsq recover` prints
for the same original; and mcp-compressor's recipe for a saved result (its `--shrinkfit` README: "CLI,
Code Mode and Just Bash: read the original file"), on what wrap answers and what `mcpsq` prints. The
doors run in this process (memwrap)."""

from __future__ import annotations

import json
import os
import re
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from memwrap import Completed, MemoryWrap, Serve, mcpsq
from rawclient import ROOT, RawClient, demo_server
from recipes import compressor_recipe, require_jq

ID_RE = re.compile(r"mcpsq recover ([0-9a-f]{32})")
TEXT = "jq -rj '.content[0].text' FILE"
STRUCTURED = "jq '.structuredContent // .content' FILE"


@dataclass
class Shell:
    env: dict[str, str]
    recovery: Path

    def run(self, *argv: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run(argv, capture_output=True, text=True, env=self.env, input=stdin, timeout=60)

    def mcpsq(self, *args: str) -> Completed:
        return mcpsq(args, self.env)

    def shrunk(self, *call: str) -> tuple[str, Path]:
        """Call a tool whose result is shrunk: its response id and recovery file."""
        done = self.mcpsq(*call)
        match = ID_RE.search(done.stderr)
        assert done.returncode == 0 and match, done.stderr
        return match.group(1), self.recovery / f"mcpsqueeze-{match.group(1)}.json"

    def jq(self, recipe: str, file: Path) -> str:
        done = self.run("bash", "-c", recipe.replace("FILE", str(file)))
        assert done.returncode == 0, done.stderr
        return done.stdout


@pytest.fixture(scope="module")
def shell(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Shell]:
    require_jq()
    tmp = tmp_path_factory.mktemp("recipes")
    recovery, sock = tmp / "recovery", tmp / "run" / "s.sock"
    args = ["--recovery-dir", str(recovery), "--budget", "4000", "--socket", str(sock)]
    with Serve([*args, "-n", "demo", "--", *demo_server()]):
        yield Shell(
            {**os.environ, "MCPSQUEEZE_SOCKET": str(sock), "MCPSQUEEZE_RECOVERY_DIR": str(recovery)}, recovery
        )


def _prompt_paragraph() -> str:
    page = (ROOT / "docs" / "bash.md").read_text(encoding="utf-8")
    section = page.split("## For agents: a system-prompt paragraph", 1)[1]
    quoted = [line[2:] for line in section.splitlines() if line.startswith("> ")]
    return " ".join(quoted)


def test_the_docs_give_jq_recipes_that_read_the_data_not_jq_dot_on_the_envelope() -> None:
    container = " ".join((ROOT / "docs" / "container.md").read_text(encoding="utf-8").split())
    for text in (_prompt_paragraph(), container):
        assert "jq . " not in text  # the file is the result envelope: `jq . FILE | jq '.issues[0]'` is null
        assert f"`{TEXT}`" in text and f"`{STRUCTURED}`" in text


def test_the_text_recipe_prints_what_mcpsq_recover_prints_and_pipes_into_jq(shell: Shell) -> None:
    rid, file = shell.shrunk("demo", "search-issues", "--query", "recipe")
    recovered = shell.mcpsq("recover", rid)
    text = shell.jq(TEXT, file)
    # both exact, byte for byte: jq -rj adds no newline, and neither does mcpsq recover
    assert text == recovered.stdout
    first = shell.run("jq", ".issues[0]", stdin=text)
    assert json.loads(first.stdout) == json.loads(
        shell.mcpsq("recover", rid, "--pointer", "/issues/0").stdout
    )
    assert (
        shell.run("jq", ".issues[0]", stdin=shell.jq("jq . FILE", file)).stdout == "null\n"
    )  # the old advice


def test_the_structured_recipe_gives_the_structured_data_or_the_blocks(shell: Shell) -> None:
    rid, file = shell.shrunk("demo", "big-structured")
    data = json.loads(shell.jq(STRUCTURED, file))
    assert data == json.loads(shell.mcpsq("recover", rid).stdout) and len(data["items"]) == 300
    assert json.loads(shell.jq(STRUCTURED + " | jq '.items[7].sku'", file)) == "SKU-00007"
    _, text_only = shell.shrunk("demo", "search-issues", "--query", "blocks")
    blocks = json.loads(shell.jq(STRUCTURED, text_only))
    assert [b["type"] for b in blocks] == ["text"]  # no structuredContent: the content blocks


@pytest.mark.parametrize(
    ("tool", "arguments"), [("search_issues", {"query": "seed"}), ("list_rows", {"table": "t"})]
)
def test_mcp_compressors_recipe_reads_the_original_of_a_result_wrap_answered(
    tmp_path: Path, demo_direct: RawClient, tool: str, arguments: dict[str, Any]
) -> None:
    """An object result carries `truncation.original_response_file`, an array `_meta.truncation`'s."""
    require_jq()
    with MemoryWrap(["--recovery-dir", str(tmp_path / "rec")]) as client:
        client.initialize()
        shrunk = client.call(tool, arguments)
    assert compressor_recipe(tmp_path, json.dumps(shrunk)) == demo_direct.call(tool, arguments)["content"]


def test_mcp_compressors_recipe_reads_mcpsq_output_for_objects_and_raw_output_for_arrays(
    tmp_path: Path, demo_direct: RawClient
) -> None:
    """An object result is printed as the shrunk JSON itself, so the recipe finds `.truncation`; an array
    keeps its type on stdout (so `| jq '.[0]'` works) and `--raw` prints its envelope, whose
    `_meta.truncation` the recipe finds. Shrunk results stay JSON although `--toonify` is on, and no
    printed block is over `--truncate-chars`."""
    require_jq()
    socket = tmp_path / "run" / "s.sock"
    args = ["--recovery-dir", str(tmp_path / "rec"), "--socket", str(socket), "--toonify"]
    with Serve([*args, "--truncate-chars", "3000", "-n", "demo", "--", *demo_server()]):
        env = {**os.environ, "MCPSQUEEZE_SOCKET": str(socket)}
        obj = mcpsq(["demo", "search-issues", "--query", "seed"], env)
        arr = mcpsq(["demo", "list-rows", "--table", "t"], env)
        raw = mcpsq(["demo", "list-rows", "--table", "raw", "--raw"], env)  # not a repeat: not deduplicated
    assert obj.returncode == 0 and len(obj.stdout) <= 3001, obj  # the limit, plus the final newline
    assert "truncation" in json.loads(obj.stdout)
    issues = demo_direct.call("search_issues", {"query": "seed"})
    assert compressor_recipe(tmp_path, obj.stdout) == issues["content"]
    assert arr.returncode == 0 and isinstance(json.loads(arr.stdout), list)
    envelope = json.loads(raw.stdout)
    assert all(len(b["text"]) <= 3000 for b in envelope["content"])
    rows = demo_direct.call("list_rows", {"table": "raw"})
    assert compressor_recipe(tmp_path, raw.stdout) == rows["content"]
