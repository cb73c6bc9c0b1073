"""One table maps errors to exit codes for every CLI (DESIGN.md)."""

from __future__ import annotations

import pytest

from mcpsqueeze._errors import (
    EXIT_BACKEND,
    EXIT_UNREACHABLE,
    EXIT_USAGE,
    BackendError,
    BackendFailure,
    RecoveryError,
    RefusedPathError,
    ShrinkError,
    UsageError,
    exit_code,
)
from mcpsqueeze.bash._session_http import SessionTimeout, SessionUnreachable
from mcpsqueeze.transports import BackendTimeout


@pytest.mark.parametrize(
    ("error", "code"),
    [
        (UsageError("x"), EXIT_USAGE),
        (RecoveryError("x"), EXIT_USAGE),
        (RefusedPathError("x"), EXIT_USAGE),
        (ShrinkError("x"), EXIT_USAGE),
        (BackendError("x"), EXIT_UNREACHABLE),
        (SessionUnreachable("x"), EXIT_UNREACHABLE),
        (BackendFailure("x"), EXIT_BACKEND),
        (SessionTimeout("x"), EXIT_BACKEND),
        (BackendTimeout("x"), EXIT_BACKEND),
    ],
)
def test_each_error_class_maps_to_the_exit_code_design_md_gives_it(error: Exception, code: int) -> None:
    assert exit_code(error) == code


def test_the_codes_are_the_documented_numbers() -> None:
    assert (EXIT_USAGE, EXIT_UNREACHABLE, EXIT_BACKEND) == (2, 3, 4)
