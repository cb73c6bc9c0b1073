"""JMESPath projection through wrap: on squeeze_recover, and as a per-tool `query` policy."""

from __future__ import annotations

import json
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

from memwrap import MemoryWrap, run_cli
from rawclient import RawClient, assert_golden, demo_server, text

GOLDEN = Path(__file__).with_name("golden")


def _options(tmp_path: Path, *extra: str) -> list[str]:
    return ["--recovery-dir", str(tmp_path / "rec"), "--page-size", "100000000", *extra]


def _record(result: dict[str, Any]) -> dict[str, Any]:
    record: dict[str, Any] = result["_meta"]["truncation"]
    return record


def test_squeeze_recover_projects_the_original_with_a_query(tmp_path: Path) -> None:
    with MemoryWrap(_options(tmp_path)) as client:
        client.initialize()
        tools = client.result("tools/list")["tools"]
        recover = next(t for t in tools if t["name"] == "squeeze_recover")
        shrunk = client.call("search_issues", {"query": "bug", "limit": 200})
        rid = _record(shrunk)["response_id"]
        keys = client.call("squeeze_recover", {"response_id": rid, "query": "issues[].key"})
        one = client.call("squeeze_recover", {"response_id": rid, "pointer": "/issues/3", "query": "title"})
        bad = client.request(
            "tools/call", {"name": "squeeze_recover", "arguments": {"response_id": rid, "query": "issues["}}
        )
        full = client.call("squeeze_recover", {"response_id": rid})
    # The listing is short: query is not listed, the JSON notice names it, and it is taken.
    assert "query" not in recover["inputSchema"]["properties"]
    assert '"query" (JMESPath)' in _record(shrunk)["message"]
    assert json.loads(text(keys)) == [f"DEMO-{1000 + i}" for i in range(200)]
    assert text(one) == json.loads(text(full))["issues"][3]["title"]
    answer = json.dumps(bad)
    assert "not valid JMESPath" in answer


def test_a_query_policy_projects_before_shrinking_and_the_original_recovers_exactly(
    tmp_path: Path, demo_direct: RawClient, wrap_door: Callable[..., AbstractContextManager[RawClient]]
) -> None:
    config = tmp_path / "config.toml"
    config.write_text('[policies."search_issues"]\nquery = "issues[].{key: key, title: title}"\n')
    args = {"query": "bug", "limit": 40}
    expected = demo_direct.call("search_issues", args)
    with wrap_door(_options(tmp_path, "--config", str(config))) as client:
        client.initialize()
        projected = client.call("search_issues", args)
        big = client.call("search_issues", {"query": "bug", "limit": 600})  # projection still too big
        recovered = client.call("squeeze_recover", {"response_id": _record(projected)["response_id"]})
        other = client.call("list_rows", {"table": "t", "n": 3})  # another tool: not projected
    record = _record(projected)
    items = json.loads(projected["content"][0]["text"])
    assert items[0] == {"key": "DEMO-1000", "title": json.loads(text(expected))["issues"][0]["title"]}
    assert len(items) == 40
    assert record["report"]["query"] == "issues[].{key: key, title: title}"
    assert record["report"]["projected"] is True
    notice = projected["content"][-1]["text"].replace(record["response_id"], "RID")
    assert_golden(GOLDEN / "query_policy_notice.txt", notice + "\n")
    assert Path(record["original_response_file"]).is_file()
    assert recovered["content"] == expected["content"]  # byte for byte
    big_record = _record(big)
    assert big_record["projection"]["report"]["query"] == "issues[].{key: key, title: title}"
    assert not [b for b in big["content"] if "query policy" in b["text"]]  # named in the record only
    assert "truncation" not in (other.get("_meta") or {})


def test_a_config_with_a_malformed_query_is_refused_at_start(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text('[policies."search_issues"]\nquery = "issues["\n')
    done = run_cli("wrap", *_options(tmp_path, "--config", str(config)), "--", *demo_server())
    assert done.returncode == 2
    assert "not valid JMESPath" in done.stderr
