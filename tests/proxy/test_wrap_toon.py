"""`wrap --toonify` (mcp-compressor's `--toonify`): JSON results that are not shrunk are shown as TOON.

Precedence as mcp-compressor has it: a shrunk result keeps its JSON preview and JSON truncation record;
TOON only for results under the budget; prose passes unchanged; recovery returns the JSON byte for byte.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import toon_format

from memwrap import MemoryServer, MemoryWrap
from rawclient import ROOT, text

RECORDS = [sys.executable, str(ROOT / "tests" / "fixtures" / "records_server.py")]


def _direct(tool: str, arguments: dict[str, object]) -> dict[str, object]:
    with MemoryServer(RECORDS) as client:
        client.initialize()
        return client.call(tool, arguments)


def test_json_under_the_budget_becomes_toon_and_recovers_as_the_original_json_byte_for_byte(
    tmp_path: Path,
) -> None:
    rows = _direct("get_records", {"n": 40})
    with MemoryWrap(["--toonify", "--recovery-dir", str(tmp_path / "rec")], target=RECORDS) as client:
        client.initialize()
        shown = client.call("get_records", {"n": 40})
        big = client.call("get_records", {"n": 300})
        prose = client.call("get_note")
        record = shown["_meta"]["truncation"]
        whole = client.call("squeeze_recover", {"response_id": record["response_id"]})
        client.close()
    assert toon_format.loads(text(shown)) == json.loads(text(rows))  # the same data ...
    assert text(shown).startswith("[40]{id,name,email,role,active,score,created_at}:\n")
    assert len(text(shown)) < len(text(rows)) / 2  # ... in far fewer characters
    assert record["format"] == "toon" and record["report"]["pruned"] is False
    assert whole["content"] == rows["content"]  # byte for byte
    assert json.loads(Path(record["original_response_file"]).read_bytes()) == rows
    assert isinstance(json.loads(big["content"][0]["text"]), list)  # shrunk: the preview stays JSON ...
    assert big["_meta"]["truncation"].get("format") is None  # ... and so does its record
    assert "_meta" not in prose and text(prose).startswith("Records are exported nightly")
    assert "  shown as TOON    1\n" in client.stderr and "  shrunk           1\n" in client.stderr
