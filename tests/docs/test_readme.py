"""The README's first screen: short, a real before/after that the product prints today, a picture, and
the commands a user types, each of them the one a test runs."""

from __future__ import annotations

import subprocess
import sys

import pytest

from docblocks import ROOT, snippet
from rawclient import require_node_paths

README = (ROOT / "README.md").read_text(encoding="utf-8")


def test_the_readme_is_at_most_150_lines_with_the_before_after_and_a_picture_in_its_first_40() -> None:
    lines = README.split("\n")
    assert len(README.splitlines()) <= 150
    first = "\n".join(lines[:40])
    assert "<!-- snippet: before-after -->" in first and "<!-- /before-after -->" in first
    assert "![" in first and "(docs/before-after.svg)" in first
    assert snippet("before-after").line < 40 and snippet("first-commands").line < 40
    assert (ROOT / "docs" / "before-after.svg").read_text(encoding="utf-8").startswith("<svg ")


def test_the_before_after_shows_an_outline_with_fold_markers_and_one_recovery_with_token_figures() -> None:
    block = snippet("before-after").text.splitlines()
    calls = [line for line in block if line.startswith("→ ")]
    assert [c.split(" ")[1] for c in calls] == ["git_diff_unstaged", "squeeze_recover"]
    assert any(line.startswith("[mcpsqueeze] Outline of ") for line in block)
    assert any(line.startswith("[lines ") and "folded" in line for line in block)
    notes = [line for line in block if line.startswith("← ")]
    assert len(notes) == 2 and all("tokens" in note for note in notes)


@pytest.mark.slow
def test_the_before_after_is_what_the_product_prints_today() -> None:
    """Runs the block's two calls through the real proxy in front of mcp-server-git and compares what
    the model reads, line for line, and the picture drawn from the same figures."""
    require_node_paths("EVERYTHING_JS", "PY_SERVERS_BIN")
    done = subprocess.run(
        [sys.executable, str(ROOT / "tests" / "docs" / "readme_example.py")],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_first_commands_are_the_ones_ci_and_the_tests_run() -> None:
    install, add, demo = (
        line.split("  #")[0].strip() for line in snippet("first-commands").text.splitlines()
    )
    # the index's name is the project's; .ci/run installs the wheel built from it with pipx
    assert install == "pipx install mcpsqueeze"
    assert 'pipx" install' in (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    # Claude Code's real CLI adds and connects this exact line (tests/core/test_client_configs.py)
    assert add == snippet("claude-code-add").first_line == snippet("readme-claude-code-add").text
    # tests/demo/test_demo_driver.py runs the demo with these arguments
    assert demo == "mcpsqueeze demo --html demo.html"


def test_set_up_starts_with_its_two_commands_and_ci_runs_the_readme_test_command() -> None:
    set_up = README.split("## Set up", 1)[1]
    assert set_up.split("```bash\n", 1)[0].count("\n") <= 3  # the block comes first in the section
    make, test = snippet("set-up").text.splitlines()
    assert make == "python3 -m venv .venv && .venv/bin/pip install -e . && .venv/bin/mcpsqueeze demo"
    assert test == "bash scripts/test.sh"
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    assert test in ci
