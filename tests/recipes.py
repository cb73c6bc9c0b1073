"""The shell recipes for reading an original that the tests run with the real `jq`
(tests/bash/test_recover_recipes.py, and the container's own jq in tests/container/test_image.py)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

# mcp-compressor's recipe, verbatim, reading a saved result from `response.json`.
COMPRESSOR_RECIPE = """\
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


def compressor_recipe(directory: Path, saved: str) -> Any:
    """Write `saved` as response.json in `directory`, run mcp-compressor's recipe there, parse its output."""
    (directory / "response.json").write_text(saved, encoding="utf-8")
    done = subprocess.run(
        ["bash", "-c", COMPRESSOR_RECIPE], cwd=directory, capture_output=True, text=True, timeout=30
    )
    assert done.returncode == 0 and done.stdout.strip(), done
    return json.loads(done.stdout)
