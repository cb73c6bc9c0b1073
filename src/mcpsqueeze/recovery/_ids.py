"""Response ids, the two recovery file names built from them, and the alias record, in one stdlib-only place
(patterns end in ``\\Z``: no trailing newline). A later id of identical bytes has an alias record,
``{"mcpsqueeze/alias_of":"<earlier id>"}``, which readers follow one step.
"""

from __future__ import annotations

import os
import re

from mcpsqueeze._errors import RecoveryError

TYPE_CHECKING = False  # not `from typing`: the shim loads this module and typing costs milliseconds

if TYPE_CHECKING:
    from typing import TypeGuard

__all__ = [
    "ALIAS_RE",
    "FINAL_NAME_RE",
    "RESPONSE_ID_RE",
    "TMP_NAME_RE",
    "alias_record",
    "alias_target",
    "bad_id_message",
    "final_name",
    "is_response_id",
    "new_response_id",
    "require_response_id",
    "tmp_name",
]

RESPONSE_ID_RE = re.compile(r"^[0-9a-f]{32}\Z")
FINAL_NAME_RE = re.compile(r"^mcpsqueeze-([0-9a-f]{32})\.json\Z")
TMP_NAME_RE = re.compile(r"^\.mcpsqueeze-([0-9a-f]{32})\.json\.tmp\Z")
ALIAS_RE = re.compile(rb'^\{"mcpsqueeze/alias_of":"([0-9a-f]{32})"\}\Z')


def is_response_id(value: object) -> TypeGuard[str]:
    """The one check of a response id, for every door (MCP recover tool, HTTP API, shell, stores)."""
    return isinstance(value, str) and RESPONSE_ID_RE.match(value) is not None


def bad_id_message(value: object) -> str:
    """What to tell whoever passed something that is not a response id."""
    return (
        f"{value!r} is not a response id (32 lowercase hex characters); "
        "copy response_id from the truncation record."
    )


def require_response_id(value: str, error: type[Exception] = RecoveryError) -> None:
    """Raise ``error`` (RecoveryError; ValueError for a caller's bug) unless ``value`` is a response id."""
    if not is_response_id(value):
        raise error(bad_id_message(value))


def new_response_id() -> str:
    """128 random bits, so an id can neither be guessed nor collide."""
    return os.urandom(16).hex()  # what `secrets.token_hex` does; `secrets` imports hmac and OpenSSL


def final_name(response_id: str) -> str:
    """The name an original is stored under once it is complete."""
    return f"mcpsqueeze-{response_id}.json"


def tmp_name(response_id: str) -> str:
    """The hidden name an original is written under before the rename makes it visible."""
    return f".mcpsqueeze-{response_id}.json.tmp"


def alias_record(target_id: str) -> bytes:
    """The whole content of a file that stands for the original stored under ``target_id``."""
    return b'{"mcpsqueeze/alias_of":"' + target_id.encode("ascii") + b'"}'


def alias_target(data: bytes) -> str | None:
    """The id an alias record points to; None for an ordinary original (the anchored match stops within
    its first bytes)."""
    match = ALIAS_RE.match(data)
    return match.group(1).decode("ascii") if match else None
