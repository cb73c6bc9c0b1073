"""`mcpsq recover` prints the original byte for byte: no newline added, none taken."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from memwrap import mcpsq

pytestmark = pytest.mark.fuzz

TEXTS = {
    "no-final-newline": "line one\nline two",
    "final-newline": "a\nb\n",
    "crlf-and-unicode": "é\r\nü 🙂\r\n\u2028x",
    "json": json.dumps({"items": [1, 2, 3]}),
}


@pytest.mark.parametrize("name", TEXTS)
def test_mcpsq_recover_prints_the_original_text_exactly(tmp_path: Path, name: str) -> None:
    rec = tmp_path / "rec"
    rec.mkdir(mode=0o700)
    rid = "ab" * 16
    text = TEXTS[name]
    (rec / f"mcpsqueeze-{rid}.json").write_text(json.dumps({"content": [{"type": "text", "text": text}]}))
    env = {k: v for k, v in os.environ.items() if not k.startswith("MCPSQUEEZE_")}
    env |= {"MCPSQUEEZE_RECOVERY_DIR": str(rec), "MCPSQUEEZE_SOCKET": str(tmp_path / "none.sock")}
    whole = mcpsq(["recover", rid], env)
    assert (whole.returncode, whole.out) == (0, text.encode("utf-8"))  # cmp: the same bytes
    lines = mcpsq(["recover", rid, "--lines", "1-"], env)
    assert lines.out == text.encode("utf-8")
