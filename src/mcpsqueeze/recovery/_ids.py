"""Response ids and the two recovery file names built from them.

Every other recovery module (and the shell shim) agrees on these names, so they live in one
stdlib-only place. Patterns end in ``\\Z`` so that ``.match`` cannot accept a trailing newline.
"""

from __future__ import annotations

import re
import secrets

__all__ = [
    "FINAL_NAME_RE",
    "RESPONSE_ID_RE",
    "TMP_NAME_RE",
    "final_name",
    "new_response_id",
    "tmp_name",
]

RESPONSE_ID_RE = re.compile(r"^[0-9a-f]{32}\Z")
FINAL_NAME_RE = re.compile(r"^mcpsqueeze-([0-9a-f]{32})\.json\Z")
TMP_NAME_RE = re.compile(r"^\.mcpsqueeze-([0-9a-f]{32})\.json\.tmp\Z")


def new_response_id() -> str:
    """128 random bits, so an id can neither be guessed nor collide."""
    return secrets.token_hex(16)


def final_name(response_id: str) -> str:
    """The name an original is stored under once it is complete."""
    return f"mcpsqueeze-{response_id}.json"


def tmp_name(response_id: str) -> str:
    """The hidden name an original is written under before the rename makes it visible."""
    return f".mcpsqueeze-{response_id}.json.tmp"
