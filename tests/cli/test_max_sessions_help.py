"""`--max-sessions` help says what happens at the cap: the session idle longest is ended
(its client gets 404 and starts a new one); 503 only when every session is busy."""

from __future__ import annotations

import pytest

from memwrap import run_cli

pytestmark = pytest.mark.fuzz


def test_max_sessions_help_says_the_idlest_session_is_ended() -> None:
    done = run_cli("wrap", "--help")
    assert done.returncode == 0, done.stderr
    help_text = " ".join(done.stdout.split())
    start = help_text.index("--max-sessions")
    option = help_text[start : start + 400]
    assert "idle longest" in option and "ended" in option, option
    assert "more are refused with 503" not in option
    assert "busy" in option and "503" in option  # 503 only when the sessions are all busy
