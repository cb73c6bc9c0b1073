"""`mcpsqueeze wrap` over stdio against the bundled demo server: the door's end-to-end tests spawn the real
CLI (parity field for field, the summary on stderr at the end, SIGTERM, a prompt exit with exact figures
after a large result, exit codes when it cannot serve); what the session answers (the listing, dedup,
server-to-client requests) runs the same wrap in this process (memwrap).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from mcpsqueeze.accounting._tokens import count_tokens
from mcpsqueeze.demo.bulk import blob
from memwrap import MemoryServer, MemoryWrap, demo_http, run_cli
from rawclient import RawClient, cli, demo_server, text

RECOVER = "squeeze_recover"

# These tests recover whole originals in one answer; pages are tested in tests/core/test_recover_pages.py.
WHOLE = ("--page-size", "100000000")


def _options(tmp_path: Path, *extra: str) -> list[str]:
    return [*WHOLE, "--recovery-dir", str(tmp_path / "rec"), *extra]


def _wrap(tmp_path: Path, *extra: str) -> list[str]:
    return cli("wrap", *_options(tmp_path, *extra), "--", *demo_server())


def _in_process(tmp_path: Path, *extra: str) -> MemoryWrap:
    """`_wrap`'s session, run in this process."""
    return MemoryWrap(_options(tmp_path, *extra))


def _exchange(client: RawClient) -> dict[str, Any]:
    """The same conversation, run directly and through the proxy."""
    out: dict[str, Any] = {"initialize": client.initialize()}
    tools = client.result("tools/list")
    out["tools"] = [t for t in tools["tools"] if t["name"] != RECOVER]
    out["prompts"] = client.result("prompts/list")
    out["prompt"] = client.result(
        "prompts/get", {"name": "summarize_issue", "arguments": {"issue_key": "DEMO-1"}}
    )
    out["resources"] = client.result("resources/list")
    out["templates"] = client.result("resources/templates/list")
    out["readme"] = client.result("resources/read", {"uri": "demo://readme"})
    out["echo"] = client.call("echo", {"text": "hi there"})
    out["add"] = client.call("add", {"a": 2, "b": 40})
    out["image"] = client.call("image")
    out["fail"] = client.call("fail", {"message": "nope"})
    out["unknown_method"] = client.request("no/such/method")
    out["bad_tool"] = client.request("tools/call", {"name": "no_such_tool", "arguments": {}})
    out["ping"] = client.result("ping")
    return out


def test_listings_and_small_results_equal_the_servers_own_field_for_field(tmp_path: Path) -> None:
    with MemoryServer() as direct:
        expected = _exchange(direct)
    with RawClient(_wrap(tmp_path)) as proxied:
        got = _exchange(proxied)
    for key in expected:
        assert got[key] == expected[key], key
    assert got["add"]["structuredContent"] == {"a": 2, "b": 40, "sum": 42}
    assert got["fail"]["isError"] is True


def test_tools_list_gains_only_the_recover_tool(tmp_path: Path) -> None:
    with _in_process(tmp_path) as client:
        client.initialize()
        names = [t["name"] for t in client.result("tools/list")["tools"]]
    assert names[-1] == RECOVER
    assert names.count(RECOVER) == 1


def test_a_repeated_large_result_becomes_a_pointer_and_the_tool_still_runs(tmp_path: Path) -> None:
    stats = tmp_path / "stats.jsonl"
    with _in_process(tmp_path, "--no-shrink", "--stats-file", str(stats)) as client:
        client.initialize()
        first = client.call("search_issues", {"query": "dedup"})
        second = client.call("search_issues", {"query": "dedup"})
        other = client.call("search_issues", {"query": "different"})
        code = client.close()
    assert len(text(first)) > 100_000
    pointer = text(second)
    assert pointer.startswith("[mcpsqueeze] identical to the result of call #1 (search_issues), ")
    assert re.search(r"\d+ (tokens|characters) not resent", pointer)
    response_id = second["_meta"]["mcpsqueeze/dedup"]["response_id"]
    assert response_id in pointer
    assert text(other) != text(first) and len(text(other)) > 100_000  # different arguments never confused
    assert code == 0
    lines = [json.loads(line) for line in stats.read_text().splitlines()]
    assert [line["action"] for line in lines] == ["passthrough", "dedup", "passthrough"]
    assert lines[1]["tokens_before"] > 10_000 and lines[1]["tokens_after"] < 200
    assert "deduplicated     1" in client.stderr
    assert "tokens saved" in client.stderr


def test_a_dedup_pointer_recovers_the_full_content(tmp_path: Path) -> None:
    with _in_process(tmp_path, "--no-shrink") as client:
        client.initialize()
        first = client.call("read_file", {"path": "a.md"})
        second = client.call("read_file", {"path": "a.md"})
        response_id = second["_meta"]["mcpsqueeze/dedup"]["response_id"]
        recovered = client.call(RECOVER, {"response_id": response_id})
    assert recovered["content"] == first["content"]


def test_small_repeated_results_are_not_replaced_by_a_longer_pointer(tmp_path: Path) -> None:
    with _in_process(tmp_path) as client:
        client.initialize()
        one = client.call("echo", {"text": "same"})
        two = client.call("echo", {"text": "same"})
    assert one == two


def test_no_dedup_turns_dedup_off(tmp_path: Path) -> None:
    with _in_process(tmp_path, "--no-dedup", "--no-shrink") as client:
        client.initialize()
        one = client.call("list_rows", {"table": "t"})
        two = client.call("list_rows", {"table": "t"})
        names = [t["name"] for t in client.result("tools/list")["tools"]]
    assert one == two
    assert RECOVER not in names  # nothing to recover: a pure pass-through


def test_summary_goes_to_stderr_and_never_to_stdout(tmp_path: Path) -> None:
    client = RawClient(_wrap(tmp_path))
    client.initialize()
    client.call("echo", {"text": "x"})
    assert client.proc.stdin is not None
    client.proc.stdin.close()
    assert client.proc.wait(20) == 0
    assert "mcpsqueeze session summary:" in client.stderr
    assert "calls proxied    1" in client.stderr


def test_sigterm_prints_the_summary_and_exits_cleanly(tmp_path: Path) -> None:
    import signal

    client = RawClient(_wrap(tmp_path))
    client.initialize()
    client.call("echo", {"text": "x"})
    client.proc.send_signal(signal.SIGTERM)
    assert client.proc.wait(20) == 0
    assert "mcpsqueeze session summary:" in client.stderr


def test_server_to_client_requests_and_notifications_are_relayed(tmp_path: Path) -> None:
    seen: list[str] = []

    def answer(message: dict[str, Any]) -> dict[str, Any]:
        seen.append(message["method"])
        if message["method"] == "sampling/createMessage":
            return {"result": {"role": "assistant", "content": {"type": "text", "text": "42"}, "model": "m"}}
        if message["method"] == "roots/list":
            return {"result": {"roots": [{"uri": "file:///work", "name": "work"}]}}
        if message["method"] == "elicitation/create":
            return {"result": {"action": "accept", "content": {"answer": "yes"}}}
        return {"error": {"code": -32601, "message": "no"}}

    caps = {"sampling": {}, "roots": {"listChanged": True}, "elicitation": {"form": {}}}
    with MemoryWrap(_options(tmp_path), on_request=answer) as client:
        client.initialize(caps)
        client.result("logging/setLevel", {"level": "debug"})
        sampled = client.call("ask_llm", {"prompt": "meaning of life?"})
        roots = client.call("list_roots")
        logged = client.call("log", {"message": "hello log"})
        progress = client.result(
            "tools/call",
            {"name": "sleep", "arguments": {"seconds": 0.2}, "_meta": {"progressToken": "tok-1"}},
        )
    assert "42" in text(sampled)
    assert "file:///work" in text(roots)
    assert text(logged) == "logged"
    assert text(progress) == "slept"
    assert seen[:2] == ["sampling/createMessage", "roots/list"]
    methods = [n["method"] for n in client.notifications]
    assert "notifications/message" in methods
    assert "notifications/progress" in methods


@pytest.mark.parametrize("budget", ["100", "1023"])
def test_a_budget_below_1024_is_a_usage_error(tmp_path: Path, budget: str) -> None:
    done = run_cli("wrap", *_options(tmp_path, "--budget", budget), "--", *demo_server())
    assert done.returncode == 2
    assert "at least 1024" in done.stderr


# -- leaving: the process exits soon after the agent closes stdin, with a summary that counts every call

BULK = [sys.executable, "-m", "mcpsqueeze.demo.bulk"]
DEADLINE = 60.0  # generous: this is not a speed test, it catches exits that wait on a stuck counter


def _summary_value(stderr: str, label: str) -> int:
    line = next(line for line in stderr.splitlines() if line.strip().startswith(label))
    return int(line.split()[len(label.split())])


def test_the_proxy_exits_promptly_after_a_large_result_with_an_exact_summary() -> None:
    size = 6_000_000
    with RawClient(cli("wrap", "--recovery", "memory", "--", *BULK)) as client:
        client.initialize()
        small = client.call("blob", {"size": 300, "seed": 1})
        large = client.call("blob", {"size": size, "seed": 2}, timeout=DEADLINE)
        assert len(text(large)) < size  # shrunk
        started = time.monotonic()
        assert client.close(timeout=DEADLINE) == 0
        assert time.monotonic() - started < DEADLINE
        stderr = client.stderr
    assert "partial" not in stderr
    assert _summary_value(stderr, "calls proxied") == 2
    expected_before = count_tokens(text(small)) + count_tokens(blob(size, 2))
    assert _summary_value(stderr, "tokens before") == expected_before
    assert _summary_value(stderr, "tokens after") == count_tokens(text(small)) + count_tokens(text(large))


def _running(marker: str) -> bool:
    from pathlib import Path

    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            try:
                if (proc / "cmdline").read_bytes().replace(b"\0", b" ").strip() == marker.encode():
                    return True
            except OSError:
                continue
    return False


def test_a_backend_started_early_does_not_outlive_a_usage_error() -> None:
    marker = "sleep 61.2345"  # wrap starts the backend before it checks its own options
    done = subprocess.run(
        cli("wrap", "--cache-ttl", "bogus", "--", *marker.split()), capture_output=True, timeout=DEADLINE
    )
    assert done.returncode == 2, done.stderr
    assert not _running(marker)


def test_no_summary_when_the_backend_cannot_start(tmp_path: Path) -> None:
    argv = cli("wrap", "--recovery-dir", str(tmp_path / "rec"), "--", "no-such-mcp-server-command")
    done = subprocess.run(argv, input="", capture_output=True, text=True, timeout=60)
    assert done.returncode == 3
    assert "no-such-mcp-server-command" in done.stderr
    assert "summary" not in done.stderr


# -- a 2026-07-28 client over stdio (the SDK's own client spawns the CLI)


MODERN = "2026-07-28"


async def _raw_call(client: Any, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    import mcp_types as types
    from pydantic import TypeAdapter

    request = types.CallToolRequest(params=types.CallToolRequestParams(name=name, arguments=arguments))
    result: dict[str, Any] = await client.session.send_request(request, TypeAdapter(dict[str, Any]))
    return result


@pytest.mark.anyio
async def test_a_2026_client_over_stdio_reaches_a_url_backend_statelessly(tmp_path: Path) -> None:
    """The stdio frontend relays 2026-07-28 messages as they are; the HTTP backend channel sends them
    as stateless POSTs with their routing headers (no initialize, no session)."""
    import os

    from mcp import StdioServerParameters

    with demo_http() as backend:
        argv = cli("wrap", *WHOLE, "--recovery-dir", str(tmp_path / "rec"), "--", backend)
        target = StdioServerParameters(command=argv[0], args=argv[1:], env=dict(os.environ))
        async with Client(target, mode=MODERN) as client:
            protocol = client.protocol_version
            tools = sorted(t.name for t in (await client.list_tools()).tools)
            big = await _raw_call(client, "search_issues", {"query": "stdio"})
            notice = json.loads(big["content"][0]["text"])["truncation"]
            recovered = await _raw_call(client, "squeeze_recover", {"response_id": notice["response_id"]})
    assert protocol == MODERN
    assert "squeeze_recover" in tools and "search_issues" in tools
    assert len(text(big)) <= 20_000 < len(text(recovered))
