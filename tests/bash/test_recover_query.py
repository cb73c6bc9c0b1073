"""`mcpsq recover ID --query EXPR`: the JMESPath projection of a stored original."""

from __future__ import annotations

import json
import os
from pathlib import Path

from memwrap import Completed, mcpsq

RID = "ab" * 16
ORIGINAL = {
    "content": [{"type": "text", "text": json.dumps({"issues": [{"key": "A-1", "t": "x"}, {"key": "A-2"}]})}]
}


def _mcpsq(rec_dir: Path, tmp_path: Path, *argv: str) -> Completed:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MCPSQUEEZE_")}
    env |= {"MCPSQUEEZE_RECOVERY_DIR": str(rec_dir), "MCPSQUEEZE_SOCKET": str(tmp_path / "none.sock")}
    return mcpsq(["recover", *argv], env)


def test_recover_query_prints_the_projection_and_combines_with_a_pointer(
    rec_dir: Path, tmp_path: Path
) -> None:
    (rec_dir / f"mcpsqueeze-{RID}.json").write_text(json.dumps(ORIGINAL))
    keys = _mcpsq(rec_dir, tmp_path, RID, "--query", "issues[].key")
    assert (keys.returncode, json.loads(keys.stdout)) == (0, ["A-1", "A-2"])
    one = _mcpsq(rec_dir, tmp_path, RID, "--pointer", "/issues/0", "--query=t")
    assert (one.returncode, one.stdout) == (0, "x")  # exactly what squeeze_recover answers


def test_recover_query_refuses_a_bad_expression_and_plain_text_with_exit_2(
    rec_dir: Path, tmp_path: Path
) -> None:
    (rec_dir / f"mcpsqueeze-{RID}.json").write_text(json.dumps(ORIGINAL))
    bad = _mcpsq(rec_dir, tmp_path, RID, "--query", "issues[")
    assert bad.returncode == 2 and "not valid JMESPath" in bad.stderr
    other = "cd" * 16
    (rec_dir / f"mcpsqueeze-{other}.json").write_text(
        json.dumps({"content": [{"type": "text", "text": "hi"}]})
    )
    plain = _mcpsq(rec_dir, tmp_path, other, "--query", "a")
    assert plain.returncode == 2 and "not JSON, so a query cannot" in plain.stderr
    missing = _mcpsq(rec_dir, tmp_path, RID, "--query")
    assert missing.returncode == 2 and "--query needs a JMESPath expression" in missing.stderr
