"""The pure projection engine (JMESPath) and its checks."""

from __future__ import annotations

import json
from typing import Any

import pytest

from mcpsqueeze._projection import ProjectionError, compile_query, project, project_text
from mcpsqueeze.core import RecoverRequest, answer
from mcpsqueeze.settings._file import POLICY_KEYS


def recover_result(original: bytes, **arguments: Any) -> dict[str, Any]:
    """The core's answer for `arguments` from stored original bytes (as every door gets it)."""
    return answer([json.loads(original)], RecoverRequest.parse({"response_id": "0" * 32, **arguments}))


DOC = {"issues": [{"key": "A-1", "summary": "one", "body": "x" * 50}, {"key": "A-2", "summary": "two"}]}


def test_a_query_keeps_only_the_selected_fields() -> None:
    assert project(DOC, "issues[].{key: key, summary: summary}") == [
        {"key": "A-1", "summary": "one"},
        {"key": "A-2", "summary": "two"},
    ]
    assert project(DOC, "issues[?key=='A-2'].summary | [0]") == "two"
    assert project(DOC, "nothing") is None


def test_a_malformed_query_is_a_usage_error_naming_it() -> None:
    with pytest.raises(ProjectionError, match=r"'issues\[' is not valid JMESPath"):
        compile_query("issues[")
    with pytest.raises(ProjectionError, match="non-empty"):
        compile_query("  ")


def test_a_query_that_does_not_apply_is_an_error_not_a_crash() -> None:
    with pytest.raises(ProjectionError, match="does not apply"):
        project({"a": "text"}, "abs(a)")


def test_project_text_leaves_non_json_alone() -> None:
    assert project_text("plain text", "a") is None
    assert json.loads(project_text(json.dumps(DOC), "issues[].key") or "") == ["A-1", "A-2"]


def test_recover_result_projects_the_original_or_the_pointed_part() -> None:
    original = json.dumps({"content": [{"type": "text", "text": json.dumps(DOC)}]}).encode()
    keys = recover_result(original, query="issues[].key")
    assert json.loads(keys["content"][0]["text"]) == ["A-1", "A-2"]
    one = recover_result(original, pointer="/issues/1", query="summary")
    assert one["content"][0]["text"] == "two"


def test_the_query_policy_refuses_bad_expressions_and_false_lifts_it() -> None:
    check = POLICY_KEYS["query"]
    assert check("issues[].key") == "issues[].key"
    assert check(False) is None
    for bad in ("issues[", 3, True):
        with pytest.raises(ValueError):
            check(bad)
