"""The `jq` recipes the agent prompt and the container docs give for a recovery file, run with the real `jq`
on files a real `serve` wrote, against what `mcpsq recover` prints for the same original. The serve runs in
this process (memwrap.Serve, its demo backend too); the shim and jq are processes, as an agent runs them."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from memwrap import Serve
from rawclient import ROOT, demo_server
from seed_recipe import require_jq

ID_RE = re.compile(r"mcpsq recover ([0-9a-f]{32})")
TEXT = "jq -rj '.content[0].text' FILE"
STRUCTURED = "jq '.structuredContent // .content' FILE"


@dataclass
class Shell:
    env: dict[str, str]
    recovery: Path

    def run(self, *argv: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run(argv, capture_output=True, text=True, env=self.env, input=stdin, timeout=60)

    def mcpsq(self, *args: str) -> subprocess.CompletedProcess[str]:
        return self.run(sys.executable, "-m", "mcpsqueeze.bash.shim", *args)

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
    with Serve([*args, "-n", "demo", "--", *demo_server()], demo_in_memory=True):
        yield Shell(
            {**os.environ, "MCPSQUEEZE_SOCKET": str(sock), "MCPSQUEEZE_RECOVERY_DIR": str(recovery)}, recovery
        )


def _prompt_paragraph() -> str:
    page = (ROOT / "docs" / "bash.md").read_text(encoding="utf-8")
    section = page.split("## For agents: a system-prompt paragraph", 1)[1]
    quoted = [line[2:] for line in section.splitlines() if line.startswith("> ")]
    return " ".join(quoted)


def test_23_27_the_docs_give_jq_recipes_that_read_the_data_not_jq_dot_on_the_envelope() -> None:
    container = " ".join((ROOT / "docs" / "container.md").read_text(encoding="utf-8").split())
    for text in (_prompt_paragraph(), container):
        assert "jq . " not in text  # the file is the result envelope: `jq . FILE | jq '.issues[0]'` is null
        assert f"`{TEXT}`" in text and f"`{STRUCTURED}`" in text


def test_23_27_the_text_recipe_prints_what_mcpsq_recover_prints_and_pipes_into_jq(shell: Shell) -> None:
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


def test_23_27_the_structured_recipe_gives_the_structured_data_or_the_blocks(shell: Shell) -> None:
    rid, file = shell.shrunk("demo", "big-structured")
    data = json.loads(shell.jq(STRUCTURED, file))
    assert data == json.loads(shell.mcpsq("recover", rid).stdout) and len(data["items"]) == 300
    assert json.loads(shell.jq(STRUCTURED + " | jq '.items[7].sku'", file)) == "SKU-00007"
    _, text_only = shell.shrunk("demo", "search-issues", "--query", "blocks")
    blocks = json.loads(shell.jq(STRUCTURED, text_only))
    assert [b["type"] for b in blocks] == ["text"]  # no structuredContent: the content blocks
