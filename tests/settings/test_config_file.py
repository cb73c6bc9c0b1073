"""The config file: loading, checking (errors name the line), precedence, and the `config` printout."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from mcpsqueeze.settings._file import ConfigError, find_config, load_config, parse_config_text
from mcpsqueeze.settings._policy import Policy
from memwrap import Completed, run_cli
from rawclient import assert_golden

GOLDEN = Path(__file__).with_name("golden")

SAMPLE = """\
# settings shared by every client config
[defaults]
budget = 8000
retention = "7d"
cache_bytes = "64M"

[policies."demo:search_issues"]
budget = 2000

[policies."*:read_file"]
shrink = false

[policies."demo:*"]
dedup = false

[mcpServers.demo]
command = "python"
args = ["-m", "mcpsqueeze.demo.server"]
"""


def _write(tmp_path: Path, text: str, name: str = "config.toml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_defaults_are_converted_to_settings_values_and_remember_their_line(tmp_path: Path) -> None:
    config = load_config(_write(tmp_path, SAMPLE))
    assert config.defaults == {"budget": 8000, "retention": 7 * 86400.0, "cache_bytes": 64 * 1024**2}
    assert config.where("budget") == f"{tmp_path}/config.toml:3"
    assert config.servers == {"demo": {"command": "python", "args": ["-m", "mcpsqueeze.demo.server"]}}


def test_every_matching_policy_applies_in_file_order_and_a_later_one_wins() -> None:
    config = parse_config_text(SAMPLE + '[policies."search_*"]\nbudget = 3000\n')
    assert config.policy_for("demo", "search_issues") == Policy(budget=3000, shrink=True, dedup=False)
    assert config.policy_for("demo", "list_rows") == Policy(budget=8000, shrink=True, dedup=False)
    assert config.policy_for("fs", "read_file") == Policy(budget=8000, shrink=False, dedup=True)
    assert config.policy_for("fs", "list_dir") == Policy(budget=8000)


def test_a_policy_without_a_colon_matches_the_tool_on_any_server_and_globs_are_case_sensitive() -> None:
    config = parse_config_text('[policies."READ_*"]\nshrink = false\n')
    assert config.policy_for("a", "READ_x").shrink is False
    assert config.policy_for("a", "read_x").shrink is True


def test_policy_for_starts_from_the_given_base() -> None:
    config = parse_config_text('[policies."x:*"]\nbudget = 4096\n')
    assert config.policy_for("x", "t", Policy(budget=9000, dedup=False)) == Policy(4096, True, False)


def test_an_older_servers_json_carries_servers_only() -> None:
    config = parse_config_text('{"mcpServers": {"demo": {"command": "python"}}}')
    assert config.servers_json and config.servers == {"demo": {"command": "python"}}
    assert config.defaults == {} and config.policies.rules == ()


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("unknown_default", "[defaults]\nbudget = 8000\nbudgte = 9000\n"),
        ("unknown_policy_key", '[defaults]\n\n[policies."a:b"]\nshrnk = false\n'),
        ("unknown_table", "[default]\nbudget = 8000\n"),
        ("bad_toml", "[defaults]\nbudget = 8000\nretention = 7d\n"),
        ("small_budget", '[policies."a:*"]\nbudget = 100\n'),
        ("bad_type", '[defaults]\nshrink = "no"\n'),
        ("bad_duration", '[defaults]\nretention = "a week"\n'),
        ("policy_not_table", 'policies = {"a:b" = 3}\n'),
    ],
)
def test_a_bad_file_is_a_clear_error_naming_the_line(tmp_path: Path, name: str, text: str) -> None:
    with pytest.raises(ConfigError) as caught:
        load_config(_write(tmp_path, text))
    message = str(caught.value).replace(str(tmp_path), "TMP")
    assert_golden(GOLDEN / f"config_error_{name}.txt", message + "\n")


def test_a_named_config_must_exist_but_the_default_place_may_be_empty(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        load_config(tmp_path / "nope.toml")
    monkeypatch.setenv("MCPSQUEEZE_CONFIG", str(tmp_path / "x.toml"))
    assert find_config(None) == (tmp_path / "x.toml", "MCPSQUEEZE_CONFIG")
    assert find_config(tmp_path / "f.toml")[1] == "--config"


def _config_cli(tmp_path: Path, *args: str, env: dict[str, str] | None = None) -> Completed:
    base: dict[str, str | None] = {"XDG_CONFIG_HOME": str(tmp_path / "xdg"), "HOME": str(tmp_path)}
    base |= {"MCPSQUEEZE_CONFIG": None, "MCPSQUEEZE_RECOVERY_DIR": None, "MCPSQUEEZE_STATS_FILE": None}
    return run_cli("config", *args, env={**base, **(env or {})})


def test_config_prints_each_setting_with_its_source_flag_env_file_line_or_default(tmp_path: Path) -> None:
    path = _write(tmp_path, SAMPLE)
    done = _config_cli(
        tmp_path,
        "--config", str(path), "--budget", "9000", "--no-dedup",
        "--tool", "demo:search_issues", "--tool", "fs:read_file", "--tool", "fs:other",
        env={"MCPSQUEEZE_RECOVERY_DIR": str(tmp_path / "rec")},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert_golden(GOLDEN / "config_printout.txt", done.stdout.replace(str(tmp_path), "TMP"))


def test_config_reads_the_default_file_in_the_user_config_dir(tmp_path: Path) -> None:
    (tmp_path / "xdg" / "mcpsqueeze").mkdir(parents=True)
    _write(tmp_path / "xdg" / "mcpsqueeze", "[defaults]\njobs = 2\n")
    done = _config_cli(tmp_path)
    assert done.returncode == 0, done.stderr
    assert f"config file: {tmp_path}/xdg/mcpsqueeze/config.toml (default)" in done.stdout
    where = re.escape(f"{tmp_path}/xdg/mcpsqueeze/config.toml:2")
    assert re.search(rf"^  jobs += 2  \({where}\)$", done.stdout, re.MULTILINE), done.stdout


def test_config_with_a_malformed_file_exits_2_naming_the_line(tmp_path: Path) -> None:
    path = _write(tmp_path, "[defaults]\nbudget = 8000\nretention = 7d\n")
    done = _config_cli(tmp_path, "--config", str(path))
    assert done.returncode == 2
    assert (
        "is not valid TOML: Expected newline or end of document after a statement (at line 3, column 14)"
        in done.stderr
    )
