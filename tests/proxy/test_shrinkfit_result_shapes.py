"""mcp-compressor's `--shrinkfit` result shapes, through `wrap`: an object keeps its top-level fields and
gains `truncation` (`message`, `report` with the real counters, `original_response_file`); an array keeps
its type with the record in `_meta.truncation`. Its shell recipe, run on these results, is in
tests/bash/test_recover_recipes.py.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from memwrap import MemoryWrap
from rawclient import RawClient

REPORT_KEYS = {"pruned", "fits", "items_omitted", "keys_omitted", "strings_truncated"}


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory, demo_direct: RawClient) -> dict[str, dict[str, Any]]:
    """Direct and proxied results of one large object and one large array, from one session each."""
    rec = tmp_path_factory.mktemp("shrinkfit") / "rec"
    out: dict[str, dict[str, Any]] = {}
    calls = {"object": ("search_issues", {"query": "seed"}), "array": ("list_rows", {"table": "t"})}
    for name, (tool, arguments) in calls.items():
        out[f"direct {name}"] = demo_direct.call(tool, arguments)
    with MemoryWrap(["--recovery-dir", str(rec)]) as client:
        client.initialize()
        for name, (tool, arguments) in calls.items():
            out[name] = client.call(tool, arguments)
    return out


def test_an_object_result_keeps_its_top_level_fields_and_gains_a_truncation_object(
    results: dict[str, dict[str, Any]],
) -> None:
    original = json.loads(results["direct object"]["content"][0]["text"])
    (block,) = results["object"]["content"]  # no preview wrapper, no extra block
    preview = json.loads(block["text"])
    assert list(preview)[: len(original)] == list(original) and list(preview)[-1] == "truncation"
    truncation = preview["truncation"]
    assert {"message", "report", "original_response_file"} <= set(truncation)
    assert set(truncation["report"]) >= REPORT_KEYS
    assert truncation["report"]["pruned"] is True and truncation["report"]["fits"] is True
    assert truncation["original_response_file"] in truncation["message"]  # recoverable without parsing
    assert json.loads(Path(truncation["original_response_file"]).read_bytes()) == results["direct object"]


def test_an_array_result_stays_an_array_with_its_recovery_in_meta_truncation(
    results: dict[str, dict[str, Any]],
) -> None:
    first = results["array"]["content"][0]["text"]
    assert isinstance(json.loads(first), list)
    record = results["array"]["_meta"]["truncation"]
    assert {"message", "report", "original_response_file"} <= set(record)
    assert set(record["report"]) >= REPORT_KEYS
    assert json.loads(Path(record["original_response_file"]).read_bytes()) == results["direct array"]
