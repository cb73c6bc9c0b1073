"""serve's session API answers /v1/recover/<id>?lines=A-B with exactly the lines a fold marker names.
The serve runs in this process (serve_api.serve_in_process); lines through a spawned serve are in
test_recover_parts_doors."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

from serve_api import api, serve_in_process, write_token

from mcpsqueeze._lines import split_lines

MARKER = re.compile(r"\[lines ([0-9]+)-([0-9]+) folded")


def test_recover_by_lines_returns_a_fold_markers_lines_byte_for_byte_and_bad_ranges_are_400(
    tmp_path: Path,
) -> None:
    token = write_token(tmp_path / "token")
    with serve_in_process(
        "--recovery-dir", str(tmp_path / "rec"), "--budget", "2000", "--listen", "127.0.0.1:0",
        "--token-file", str(tmp_path / "token"), "-n", "demo", "--", sys.executable, "-m", "mcpsqueeze.demo.server",
    ) as url:  # fmt: skip
        call = {"server": "demo", "tool": "read_file", "arguments": {"path": "notes.md"}}
        status, first = api(url, token, "/v1/call", call)
        assert status == 200 and first["action"] == "shrink", first
        rid = first["response_id"]
        stored = json.loads(Path(first["original_response_file"]).read_text(encoding="utf-8"))
        lines = split_lines(stored["content"][0]["text"])
        folds = MARKER.findall(first["result"]["content"][0]["text"])
        assert folds, first["result"]
        for a, b in folds[:3]:
            status, got = api(url, token, f"/v1/recover/{rid}?lines={a}-{b}")
            assert status == 200, got
            assert got["result"]["content"][0]["text"] == "".join(lines[int(a) - 1 : int(b)])
            meta = got["result"]["_meta"]["mcpsqueeze/lines"]
            assert meta == {"first": int(a), "last": int(b), "total_lines": len(lines)}
        status, tail = api(url, token, f"/v1/recover/{rid}?lines={len(lines) - 1}-")
        assert status == 200 and tail["result"]["content"][0]["text"] == "".join(lines[-2:])
        for bad, says in (
            ("lines=9-3", "ends before it starts"),
            ("lines=x", "must be a line range"),
            ("lines=1-2&offset=0", "not both"),
            (f"lines={len(lines) + 1}", f"which has {len(lines)} line(s)"),
        ):
            status, refused = api(url, token, f"/v1/recover/{rid}?{bad}")
            assert status == 400 and says in refused["error"]["message"], (bad, refused)
        status, missing = api(url, token, f"/v1/recover/{'0' * 32}?lines=1-2")
        assert status == 404 and missing["error"]["code"] == "not_found"
