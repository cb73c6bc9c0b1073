"""The public names of `mcpsqueeze`, and that importing it stays cheap (the shim imports it)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import mcpsqueeze

SRC = Path(mcpsqueeze.__file__).resolve().parents[1]


def test_the_public_names_are_pinned() -> None:
    assert sorted(mcpsqueeze.__all__) == sorted(
        [
            "BackendError",
            "Client",
            "MCPSqueezeError",
            "RecoveryError",
            "RefusedPathError",
            "Settings",
            "ShrinkError",
            "Squeezer",
            "ToolError",
            "Toolset",
            "UsageError",
            "__version__",
            "shrink_tools",
        ]
    )
    assert all(getattr(mcpsqueeze, name) is not None for name in mcpsqueeze.__all__)


def test_importing_the_package_loads_none_of_the_library_doors() -> None:
    code = "import sys, mcpsqueeze; print(sorted(m for m in sys.modules if m.split('.')[0] in {'anyio', 'pydantic', 'mcp'} or m.startswith('mcpsqueeze.api')))"
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env={"PYTHONPATH": str(SRC)}
    )
    assert result.stdout.strip() == "[]"
