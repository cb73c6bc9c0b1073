"""Per-tool policies from the config file, through `mcpsqueeze wrap` (in process: the CLI's own parser)
in front of the bundled demo server and the records fixture server."""

from __future__ import annotations

import sys
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

from memwrap import MemoryWrap, run_cli
from rawclient import RawClient, demo_server

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


def test_two_tools_of_one_server_get_the_budgets_their_policies_give(
    tmp_path: Path, wrap_door: Callable[..., AbstractContextManager[RawClient]]
) -> None:
    config = tmp_path / "config.toml"
    config.write_text(CONFIG, encoding="utf-8")
    with wrap_door(
        ["--config", str(config), "--name", "demo", "--recovery-dir", str(tmp_path / "rec")]
    ) as client:
        client.initialize()
        issues = client.call("search_issues", {"query": "policy"})
        rows = client.call("list_rows", {"table": "t"})
        again = client.call("list_rows", {"table": "t"})
        whole_file = client.call("read_file", {"path": "big.txt"})
    assert issues["_meta"]["truncation"]["report"]["pruned"] is True
    assert _chars(issues) <= 2000
    assert 2000 < _chars(rows) <= 6000  # the file's default budget, not search_issues' 2000
    assert "truncation" in rows["_meta"]
    assert "mcpsqueeze/dedup" not in (again.get("_meta") or {})  # dedup = false for list_*
    assert "truncation" not in (whole_file.get("_meta") or {}) and _chars(whole_file) > 6000


def test_a_flag_overrides_the_file_default_but_not_a_per_tool_policy(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text(CONFIG, encoding="utf-8")
    args = [
        "--config", str(config), "--name", "demo", "--budget", "3000", "--recovery-dir", str(tmp_path / "rec"),
    ]  # fmt: skip
    with MemoryWrap(args) as client:
        client.initialize()
        rows = client.call("list_rows", {"table": "t"})
        issues = client.call("search_issues", {"query": "flag"})
    assert 2000 < _chars(rows) <= 3000
    assert _chars(issues) <= 2000


def test_wrap_refuses_a_servers_json_as_its_config_and_names_the_fix(tmp_path: Path) -> None:
    servers = tmp_path / "servers.json"
    servers.write_text('{"mcpServers": {}}')
    done = run_cli("wrap", "--config", str(servers), "--", *demo_server())
    assert done.returncode == 2
    assert "is a servers JSON (for serve); wrap takes its backend after '--'" in done.stderr


RECORDS = [sys.executable, str(Path(__file__).parents[1] / "fixtures" / "records_server.py")]
RESULT_CONFIG = """\
[defaults]
budget = 100000
shrink = false
dedup = false

[policies."records:get_records"]
toonify = true

[policies."records:get_note"]
shrink = true
truncate_chars = 300
"""


def test_toonify_and_truncate_chars_apply_only_to_the_tools_whose_policies_set_them(tmp_path: Path) -> None:
    from fixtures import records_server

    config = tmp_path / "config.toml"
    config.write_text(RESULT_CONFIG, encoding="utf-8")
    args = ["--config", str(config), "--name", "records", "--recovery-dir", str(tmp_path / "rec")]
    with MemoryWrap(args, target=RECORDS) as client:
        client.initialize()
        rows = client.call("get_records", {"n": 40})
        tools = [t["name"] for t in client.result("tools/list", {})["tools"]]
        accounts = client.call("get_accounts", {"n": 41})
        note = client.call("get_note")
        recovered = client.call(
            "squeeze_recover", {"response_id": rows["_meta"]["truncation"]["response_id"]}
        )
    original = records_server.get_records(40)
    assert "squeeze_recover" in tools  # offered: policies turn stages on that the defaults leave off
    assert accounts["content"][0]["text"] == records_server.get_accounts(41)  # not toonified, not capped
    assert "truncation" not in (accounts.get("_meta") or {}) and _chars(accounts) > 300
    record = rows["_meta"]["truncation"]
    assert record["format"] == "toon" and record["report"]["pruned"] is False
    assert rows["content"][0]["text"].startswith("[40]{") and _chars(rows) < len(original) / 2
    assert recovered["content"][0]["text"] == original  # the JSON, byte for byte
    assert note["_meta"]["truncation"]["report"]["pruned"] is True  # 672 chars of prose, capped at 300
    assert all(len(b["text"]) <= 300 for b in note["content"] if b["type"] == "text")
