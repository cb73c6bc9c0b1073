"""Seed 000's shell recipe for finding and reading an original, verbatim, for the tests that run it."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

# From seed 000 ("CLI, Code Mode and Just Bash: read the original file"), reading `response.json`.
RECIPE = """\
original=$(jq -r '.truncation.original_response_file // ._meta.truncation.original_response_file // empty' response.json)
if [ -n "$original" ]; then
  jq '.structuredContent // .content' "$original"
fi
"""


def require_jq() -> None:
    if shutil.which("jq") is None:
        if os.environ.get("CI"):
            pytest.fail("jq is missing; .ci/run installs it with apt-get")
        pytest.skip("jq is not installed")


def run_recipe(directory: Path, saved: str) -> Any:
    """Write `saved` as response.json in `directory`, run the recipe there, parse what it prints."""
    require_jq()
    (directory / "response.json").write_text(saved, encoding="utf-8")
    done = subprocess.run(["bash", "-c", RECIPE], cwd=directory, capture_output=True, text=True, timeout=30)
    assert done.returncode == 0 and done.stdout.strip(), done
    return json.loads(done.stdout)
