"""docs/python-api.md runs as written: its examples, in order, in one namespace, and what they return."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from docblocks import snippet

EXAMPLES = ["python-api-shrink-tools", "python-api-squeezer", "python-api-client", "python-api-code-mode"]


@pytest.fixture(scope="module")
def examples(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    """The page's examples run one after the other, as a reader pastes them, in a scratch directory:
    the names each one leaves behind, by example."""
    namespace: dict[str, Any] = {"__name__": "__main__"}
    after: dict[str, dict[str, Any]] = {}
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(tmp_path_factory.mktemp("python-api"))
        for name in EXAMPLES:
            exec(compile(snippet(name).text, f"docs/python-api.md[{name}]", "exec"), namespace)
            after[name] = {**namespace, "cwd": Path.cwd()}
    return after


def _compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def test_shrink_tools_lists_the_recover_tool_and_gives_the_original_back(examples: dict[str, Any]) -> None:
    ran = examples["python-api-shrink-tools"]
    assert ran["names"] == ["search_issues", "read_page", "squeeze_recover"]
    assert ran["record"]["report"]["pruned"] is True
    assert json.loads(ran["original"]["content"][0]["text"]) == ran["search_issues"]("login")


def test_squeezer_recover_answers_text_compact_json_windows_and_queries(examples: dict[str, Any]) -> None:
    ran = examples["python-api-squeezer"]
    issues = ran["search_issues"]("login")["issues"]
    assert json.loads(ran["text"]) == {"issues": issues}
    assert ran["node"] == _compact(issues[17])  # compact, not pretty-printed
    assert ran["window"] == ran["text"][:2000]
    assert ran["keys"] == _compact([issue["key"] for issue in issues])
    assert ran["answer"]["isError"] is False and ran["whole"]["content"] == ran["result"]["content"]


def test_client_calls_recovers_and_answers_full_from_the_stored_original(examples: dict[str, Any]) -> None:
    ran = examples["python-api-client"]
    assert "search_issues" in [tool["name"] for tool in ran["tools"]["demo"]]
    found = json.loads(ran["text"])
    assert ran["node"] == _compact(found["issues"][17]) and ran["window"] == ran["text"][:5000]
    assert json.loads(ran["open_keys"]) == [i["key"] for i in found["issues"] if i["state"] == "open"]
    assert json.loads(ran["same"]["content"][0]["text"]) == found  # the original, not a preview
    assert "squeeze_recover" in [f.__name__ for f in ran["functions"]]
    assert "truncation" in ran["shown"]["_meta"] and "mcpsqueeze/dedup" in ran["pointer"]["_meta"]


def test_code_mode_files_talk_to_the_open_client_and_its_results_recover_there(
    examples: dict[str, Any],
) -> None:
    ran = examples["python-api-code-mode"]
    assert (
        Path("agent_tools/demo.py") in ran["written"] and (ran["cwd"] / "agent_tools" / "demo.py").is_file()
    )
    assert ran["ran"].returncode == 0, ran["ran"].stderr
    assert json.loads(ran["agents_original"])["issues"][0]["key"].startswith("DEMO-")
