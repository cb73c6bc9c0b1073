"""Per-tool policies from the config file, through the real `mcpsqueeze wrap` and the bundled demo server."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rawclient import RawClient, cli, demo_server

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


def test_two_tools_of_one_server_get_the_budgets_their_policies_give(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text(CONFIG, encoding="utf-8")
    argv = cli(
        "wrap", "--config", str(config), "--name", "demo", "--recovery-dir", str(tmp_path / "rec"),
        "--", *demo_server(),
    )  # fmt: skip
    with RawClient(argv) as client:
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
    argv = cli(
        "wrap", "--config", str(config), "--name", "demo", "--budget", "3000",
        "--recovery-dir", str(tmp_path / "rec"), "--", *demo_server(),
    )  # fmt: skip
    with RawClient(argv) as client:
        client.initialize()
        rows = client.call("list_rows", {"table": "t"})
        issues = client.call("search_issues", {"query": "flag"})
    assert 2000 < _chars(rows) <= 3000
    assert _chars(issues) <= 2000


def test_wrap_refuses_a_servers_json_as_its_config_and_names_the_fix(tmp_path: Path) -> None:
    import subprocess

    servers = tmp_path / "servers.json"
    servers.write_text('{"mcpServers": {}}')
    done = subprocess.run(
        cli("wrap", "--config", str(servers), "--", *demo_server()),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert "is a servers JSON (for serve); wrap takes its backend after '--'" in done.stderr
