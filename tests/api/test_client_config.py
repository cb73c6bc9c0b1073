"""Client with the config file of `wrap` and `serve`: per-tool policies, discovery, keywords over the file."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from mcpsqueeze import Client, shrink_tools
from mcpsqueeze.settings._file import ConfigError

DEMO = {"demo": {"command": sys.executable, "args": ["-m", "mcpsqueeze.demo.server"]}}
RECORDS_PY = Path(__file__).parents[1] / "fixtures" / "records_server.py"
RECORDS = {"records": {"command": sys.executable, "args": [str(RECORDS_PY)]}}

# The same tools and budgets as tests/proxy/test_wrap_config.py and tests/serve/test_serve_config_file.py
CONFIG = """\
[defaults]
budget = 6000

[policies."demo:search_issues"]
budget = 2000

[policies."demo:read_file"]
shrink = false

[policies."list_*"]
dedup = false
"""


def _chars(result: dict[str, Any]) -> int:
    return sum(len(b["text"]) for b in result["content"] if b["type"] == "text")


def _settings(*args: Any, **kw: Any) -> Any:
    """The effective session-wide policy of a Client, never opened (no server started)."""
    client = Client(*args, **kw)
    client.close()
    return client.settings.policy


@pytest.fixture
def config(tmp_path: Path) -> Path:
    path = tmp_path / "config.toml"
    path.write_text(CONFIG, encoding="utf-8")
    return path


def test_two_tools_of_one_server_get_the_budgets_their_policies_give_through_client(config: Path) -> None:
    with Client(DEMO, config=config) as client:
        issues = client.call("demo", "search_issues", {"query": "policy"})
        rows = client.call("demo", "list_rows", {"table": "t"})
        again = client.call("demo", "list_rows", {"table": "t"})
        whole_file = client.call("demo", "read_file", {"path": "big.txt"})
        assert len(json.loads(client.recover(rows["_meta"]["truncation"]["response_id"]))) == 500
    assert issues["_meta"]["truncation"]["report"]["pruned"] is True and _chars(issues) <= 2000
    assert 2000 < _chars(rows) <= 6000  # the file's default budget, not search_issues' 2000
    assert "mcpsqueeze/dedup" not in (again.get("_meta") or {})  # dedup = false for list_*
    assert "truncation" not in (whole_file.get("_meta") or {}) and _chars(whole_file) > 6000


def test_a_keyword_overrides_the_file_default_but_not_a_per_tool_policy(config: Path) -> None:
    with Client(DEMO, budget=3000, config=config) as client:
        assert client.settings.policy.budget == 3000
        rows = client.call("demo", "list_rows", {"table": "t"})
        issues = client.call("demo", "search_issues", {"query": "keyword"})
    assert 2000 < _chars(rows) <= 3000
    assert _chars(issues) <= 2000


def test_the_file_is_found_as_the_cli_finds_it_and_config_false_reads_none(
    config: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("MCPSQUEEZE_CONFIG", str(config))
    assert _settings(DEMO).budget == 6000
    assert _settings(DEMO, config=False).budget == 20_000
    monkeypatch.delenv("MCPSQUEEZE_CONFIG")
    default = tmp_path / "xdg" / "mcpsqueeze" / "config.toml"
    default.parent.mkdir(parents=True)
    default.write_text("[defaults]\nbudget = 7000\n", encoding="utf-8")
    assert _settings(DEMO).budget == 7000
    assert _settings(DEMO, config=config).budget == 6000  # named: beats the default place
    default.write_text("[defaults]\nbudget = 7\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"config.toml:2: budget = 7: must be at least 1024"):
        Client(DEMO)


def test_servers_can_come_from_the_config_files_mcpservers_tables(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text(
        f'[policies."echo"]\nshrink = false\n\n[mcpServers.demo]\ncommand = {json.dumps(sys.executable)}\n'
        'args = ["-m", "mcpsqueeze.demo.server"]\n',
        encoding="utf-8",
    )
    with Client(config=path) as client:
        assert client.call("demo", "echo", {"text": "hi"})["content"][0]["text"] == "hi"
    from mcpsqueeze import UsageError

    with pytest.raises(UsageError, match="no servers"):
        Client(config=False)


RESULT_CONFIG = """\
[defaults]
budget = 100000
shrink_above = false

[policies."records:get_records"]
toonify = true

[policies."records:get_note"]
truncate_chars = 300
"""


def test_toonify_and_truncate_chars_come_per_tool_from_the_file_and_as_keywords(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text(RESULT_CONFIG, encoding="utf-8")
    with Client(RECORDS, config=path) as client:
        rows = client.call("records", "get_records", {"n": 40})
        accounts = client.call("records", "get_accounts", {"n": 41})
        note = client.call("records", "get_note")
        original = client.recover(rows["_meta"]["truncation"]["response_id"])
    assert rows["_meta"]["truncation"]["format"] == "toon" and rows["content"][0]["text"].startswith("[40]{")
    assert json.loads(original) == json.loads(accounts["content"][0]["text"])[:40]
    assert "truncation" not in (accounts.get("_meta") or {})  # the same shape, no policy: JSON
    assert all(len(b["text"]) <= 300 for b in note["content"] if b["type"] == "text")
    assert note["_meta"]["truncation"]["report"]["pruned"] is True
    with Client(RECORDS, toonify=True, shrink_above=False, config=False) as client:  # a keyword: every tool
        accounts = client.call("records", "get_accounts", {"n": 41})
        note = client.call("records", "get_note")
    assert accounts["_meta"]["truncation"]["format"] == "toon"
    assert "truncation" not in (note.get("_meta") or {})  # prose is never TOON


def test_keywords_beat_the_files_defaults_and_truncate_chars_0_lifts_its_cap(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text("[defaults]\ntruncate_chars = 500\ntoonify = true\n", encoding="utf-8")
    from_file = _settings(RECORDS, config=path)
    assert (from_file.truncate_chars, from_file.toonify) == (500, True)
    lifted = _settings(RECORDS, config=path, truncate_chars=0, toonify=False)
    assert (lifted.truncate_chars, lifted.toonify) == (None, False)


def test_shrink_above_defaults_to_6000_comes_from_the_file_and_false_turns_it_off(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text("[defaults]\nshrink_above = 9000\n", encoding="utf-8")
    assert _settings(RECORDS, config=False).shrink_above == 6000
    assert _settings(RECORDS, config=path).shrink_above == 9000
    assert _settings(RECORDS, config=path, shrink_above=12000).shrink_above == 12000
    assert _settings(RECORDS, config=path, shrink_above=False).shrink_above is None


def test_shrink_tools_takes_toonify_and_truncate_chars() -> None:
    def rows(n: int = 10) -> list[dict[str, Any]]:
        """Uniform records."""
        return [{"id": i, "name": f"user {i}", "active": i % 2 == 0} for i in range(n)]

    def prose() -> str:
        """A long paragraph."""
        return "Prose that is not JSON stays prose. " * 40

    with shrink_tools([rows, prose], toonify=True, truncate_chars=500) as toolset:
        shown = toolset.call_sync("rows", {})
        text = toolset.call_sync("prose", {})
        recovered = toolset.call_sync(
            "squeeze_recover", {"response_id": shown["_meta"]["truncation"]["response_id"]}
        )
    assert shown["content"][0]["text"].startswith("[10]{id,name,active}:")  # under the cap: TOON
    assert recovered["content"][0]["text"] == json.dumps(rows(), ensure_ascii=False)
    assert text["_meta"]["truncation"]["report"]["pruned"] is True
    assert all(len(b["text"]) <= 500 for b in text["content"] if b["type"] == "text")
