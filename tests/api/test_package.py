"""The public names of `mcpsqueeze`. (That importing it stays cheap: tests/bash/test_shim.py.)"""

from __future__ import annotations

import mcpsqueeze


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
