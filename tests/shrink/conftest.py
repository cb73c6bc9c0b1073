"""Shared fixtures for the condense engine's tests."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from mcpsqueeze._voice import McpVoice

try:
    import mcpsqueeze.shrink  # noqa: F401
except ImportError:  # running from a checkout without an installed package
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "src"))

# Keep in step with test_notice.py, which spells them out for its golden files.
from mcpsqueeze.shrink import RecoveryHint

GOLDEN = Path(__file__).parent / "golden"
RESPONSE_ID = "0123456789abcdef0123456789abcdef"
FILE = f"/home/agent/.cache/mcpsqueeze/recovery/mcpsqueeze-{RESPONSE_ID}.json"


@pytest.fixture
def hint() -> RecoveryHint:
    return RecoveryHint(response_id=RESPONSE_ID, file=FILE, voice=McpVoice())


@pytest.fixture
def golden():  # type: ignore[no-untyped-def]
    """Compare a text with ``golden/<name>``; ``MCPSQUEEZE_UPDATE_GOLDEN=1`` rewrites the files."""

    from rawclient import assert_golden

    def check(name: str, text: str) -> None:
        assert_golden(GOLDEN / name, text)

    return check
