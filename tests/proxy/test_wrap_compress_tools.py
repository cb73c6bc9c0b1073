"""`wrap --compress-tools`, over stdio and streamable HTTP (both protocol revisions), in this process
(memwrap): the compressed listing, invoke through the whole pipeline, `full=true`, recovery, refreshes
and errors.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import Client
from pydantic import TypeAdapter

from memwrap import HttpWrap, MemoryWrap, run_cli, wrap_transport
from rawclient import RawClient, demo_server, text, wait_for

RAW: Any = TypeAdapter(dict[str, Any])
MODERN = "2026-07-28"
CHANGING = [sys.executable, str(Path(__file__).parents[1] / "fixtures" / "changing_backend.py")]
RID = re.compile(r"\b[0-9a-f]{32}\b")


def options(tmp_path: Path, *flags: str) -> list[str]:
    return ["--recovery-dir", str(tmp_path / "rec"), "--page-size", "100000000", *flags]


def in_process(tmp_path: Path, *flags: str, target: list[str] | None = None) -> MemoryWrap:
    """wrap (of the demo server by default) over stdio, in this process."""
    return MemoryWrap(options(tmp_path, *flags), target=target)


def same_ids(text_a: str, text_b: str) -> tuple[str, str]:
    """Both texts with their response ids numbered by first appearance (ids are random per run), and a
    dedup pointer's figure blanked: tokens or characters depends on whether counting (off the response
    path) has caught up, that is on the machine's load."""

    def number(value: str) -> str:
        seen: dict[str, str] = {}
        value = re.sub(r"\d+ (?:tokens|characters) not resent", "<n> not resent", value)
        return RID.sub(lambda m: seen.setdefault(m.group(0), f"<id{len(seen)}>"), value)

    return number(text_a), number(text_b)


def invoke(client: RawClient, prefix: str, tool: str, args: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return client.request(
        "tools/call",
        {"name": f"{prefix}_invoke_tool", "arguments": {"tool_name": tool, "tool_input": args, **extra}},
    )


def test_the_listing_is_the_frontend_tools_with_the_chosen_prefix_and_our_recover_tool(
    tmp_path: Path,
) -> None:
    names = {}
    for flags, level in (
        ((), "medium"),
        (("--name", "demo"), "max"),
        (("--name", "demo", "--server-name", "issues"), "low"),
    ):
        with in_process(tmp_path, "--compress-tools", level, *flags) as client:
            client.initialize()
            names[flags] = [t["name"] for t in client.result("tools/list")["tools"]]
    assert names[()] == ["server_get_tool_schema", "server_invoke_tool", "squeeze_recover"]  # as the anchor
    assert names[("--name", "demo")] == [
        "demo_get_tool_schema",
        "demo_invoke_tool",
        "demo_list_tools",
        "squeeze_recover",
    ]
    assert names[("--name", "demo", "--server-name", "issues")][0] == "issues_get_tool_schema"
    with in_process(tmp_path, env_flag := "--compress-tools", "off") as client:
        client.initialize()
        plain = [t["name"] for t in client.result("tools/list")["tools"]]
    assert env_flag and "search_issues" in plain and "squeeze_recover" in plain


def test_invoke_returns_what_plain_wrap_returns_and_full_returns_the_direct_result(
    tmp_path: Path, demo_direct: RawClient
) -> None:
    calls = [("echo", {"text": "hi"}), ("search_issues", {"query": "x"}), ("search_issues", {"query": "x"}),
             ("add", {"a": 2, "b": 3}), ("fail", {"message": "no"}), ("big_structured", {})]  # fmt: skip
    originals = [demo_direct.request("tools/call", {"name": t, "arguments": a}) for t, a in calls]
    with in_process(tmp_path, "--stats-file", str(tmp_path / "plain.jsonl")) as plain:
        plain.initialize()
        plain_answers = [plain.request("tools/call", {"name": t, "arguments": a}) for t, a in calls]
        plain_recovered = plain.call(
            "squeeze_recover", {"response_id": RID.findall(text(plain_answers[1]["result"]))[0]}
        )
    stats = tmp_path / "compact.jsonl"
    with in_process(
        tmp_path, "--compress-tools", "medium", "--name", "demo", "--stats-file", str(stats)
    ) as client:
        client.initialize()
        answers = [invoke(client, "demo", t, a) for t, a in calls]
        ids = RID.findall(text(answers[1]["result"]))
        recovered = client.call("squeeze_recover", {"response_id": ids[0]})
        by_invoke = invoke(client, "demo", "squeeze_recover", {"response_id": ids[0], "lines": "1-3"})
        fulls = [invoke(client, "demo", t, a, full=True) for t, a in calls]
        assert client.close() == 0
    for mine, theirs in zip(answers, plain_answers, strict=True):
        a, b = same_ids(json.dumps(mine["result"]), json.dumps(theirs["result"]))
        assert a == b  # previews, dedup pointers, errors: the same, ids aside
    assert "identical to the result of call #2 (search_issues)" in text(answers[2]["result"])
    assert recovered == plain_recovered and recovered["content"] == originals[1]["result"]["content"]
    assert "lines" in json.dumps(by_invoke["result"]["_meta"])  # recovery through invoke works too
    for full, original in zip(fulls, originals, strict=True):
        assert json.dumps(full["result"]) == json.dumps(original["result"])  # byte for byte, key order too
    records = [r for r in map(json.loads, stats.read_text().splitlines()) if r["action"] != "recover"]
    assert [r["tool"] for r in records][:6] == [t for t, _ in calls]  # accounted by the real tool name
    assert {r["server"] for r in records} == {"demo"}


def test_a_per_tool_policy_applies_by_the_real_tool_name(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text('[policies."search_issues"]\nshrink = false\n')
    with in_process(tmp_path, "--compress-tools", "high", "--config", str(config)) as client:
        client.initialize()
        kept = invoke(client, "server", "search_issues", {"query": "x"})["result"]
        shrunk = invoke(client, "server", "list_rows", {"table": "t"})["result"]
    assert "truncation" not in json.dumps(kept) and len(text(kept)) > 20_000
    assert "truncation" in json.dumps(shrunk)


def test_schema_list_and_error_answers_over_the_wire(tmp_path: Path) -> None:
    with in_process(tmp_path, "--compress-tools", "max", "--name", "demo") as client:
        client.initialize()
        schema = client.call("demo_get_tool_schema", {"tool_name": "search_issues"})
        listed = client.call("demo_list_tools")
        unknown = invoke(client, "demo", "search_issue", {})
        bad = invoke(client, "demo", "search_issues", {"qurey": "x"})
        no_name = client.request("tools/call", {"name": "demo_get_tool_schema", "arguments": {}})
        prompts = client.result("prompts/list")
    assert text(schema).startswith("search_issues(query: string, limit?: integer):")
    assert "\necho(text: string):" in text(listed)
    assert unknown["error"]["code"] == -32603
    assert unknown["error"]["message"].startswith(
        'tool not found: "search_issue". Close matches: search_issues'
    )
    assert bad["error"]["code"] == -32602 and "missing query (given qurey?)" in bad["error"]["message"]
    assert no_name["error"] == {"code": -32602, "message": "missing tool_name"}
    with in_process(tmp_path) as plain:
        plain.initialize()
        assert plain.result("prompts/list") == prompts  # prompts pass untouched


def test_a_backends_list_changed_refreshes_the_compressed_listing(tmp_path: Path) -> None:
    with in_process(tmp_path, "--compress-tools", "medium", "--name", "c", target=CHANGING) as client:
        client.initialize()
        first = client.result("tools/list")["tools"][0]["description"]
        assert "tool_1(n: integer): Tool number 1\n" not in first and first.endswith(
            "tool_1(n: integer): Tool number 1"
        )
        invoke(client, "c", "grow", {})
        wait_for(lambda: client.notifications, what="list_changed reaches the agent")
        assert client.notifications[-1]["method"] == "notifications/tools/list_changed"
        schema = client.call("c_get_tool_schema", {"tool_name": "tool_2"})  # listed again after the change
        again = client.result("tools/list")["tools"][0]["description"]
        invoke(client, "c", "grow", {"quiet": True})  # no notification: an unknown name lists again
        called = invoke(client, "c", "tool_3", {"n": 3})
        prompts = client.result("prompts/list")
    assert text(schema).startswith("tool_2(n: integer): Tool number 2. More.")
    assert again.endswith("tool_2(n: integer): Tool number 2")
    assert json.loads(text(called["result"])) == {"name": "tool_3", "arguments": {"n": 3}}
    assert prompts == {"prompts": [{"name": "hello", "description": "A prompt, untouched."}]}


async def _over_http(url: str, mode: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    async with Client(url, mode=mode) as client:
        out["protocol"] = client.protocol_version
        out["tools"] = [t.name for t in (await client.list_tools()).tools]

        async def call(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
            request = types.CallToolRequest(
                params=types.CallToolRequestParams(name=name, arguments=arguments)
            )
            result: dict[str, Any] = await client.session.send_request(request, RAW)
            return result

        args = {"tool_name": "search_issues", "tool_input": {"query": mode}}
        big = await call("demo_invoke_tool", args)
        out["big_chars"] = len(text(big))
        notice = json.loads(big["content"][0]["text"])["truncation"]
        out["recovered"] = text(await call("squeeze_recover", {"response_id": notice["response_id"]}))
        out["full"] = text(await call("demo_invoke_tool", {**args, "full": True}))
        out["schema"] = text(await call("demo_get_tool_schema", {"tool_name": "echo"}))
        out["echo"] = text(
            await call("demo_invoke_tool", {"tool_name": "echo", "tool_input": {"text": mode}})
        )
    return out


@pytest.mark.anyio
async def test_both_protocol_revisions_over_http_get_the_compressed_tools(tmp_path: Path) -> None:
    extra = ("--compress-tools", "medium", "--name", "demo", "--page-size", "100000000")
    with HttpWrap(["--recovery-dir", str(tmp_path / "rec"), *extra], demo_server()) as door:
        url = door.url
        results: dict[str, dict[str, Any]] = {}

        async def run(mode: str) -> None:
            results[mode] = await _over_http(url, mode)

        async with anyio.create_task_group() as tg:
            tg.start_soon(run, MODERN)
            tg.start_soon(run, "legacy")
    assert results[MODERN]["protocol"] == MODERN and results["legacy"]["protocol"] == "2025-11-25"
    for mode, got in results.items():
        assert got["tools"] == ["demo_get_tool_schema", "demo_invoke_tool", "squeeze_recover"], mode
        assert got["big_chars"] <= 20_000 and got["recovered"] == got["full"], mode
        assert len(got["full"]) > 20_000 and got["echo"] == mode
        assert got["schema"].startswith("echo(text: string):")


def test_the_knob_comes_from_the_flag_its_variable_or_the_config_file_flags_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = tmp_path / "config.toml"
    config.write_text('[defaults]\ncompress_tools = "max"\ntool_prefix = "cfg"\n')

    def names(*flags: str, env: dict[str, str] | None = None) -> list[str]:
        with monkeypatch.context() as variables:
            for key, value in (env or {}).items():
                variables.setenv(key, value)  # what the CLI's parser reads, as a spawned wrap would
            with in_process(tmp_path, *flags) as client:
                client.initialize()
                return [t["name"] for t in client.result("tools/list")["tools"]]

    env = {"MCPSQUEEZE_COMPRESS_TOOLS": "high", "MCPSQUEEZE_SERVER_NAME": "envname"}
    assert names(env=env) == ["envname_get_tool_schema", "envname_invoke_tool", "squeeze_recover"]
    assert names("--config", str(config))[:3] == ["cfg_get_tool_schema", "cfg_invoke_tool", "cfg_list_tools"]
    assert names("--config", str(config), "--compress-tools", "low")[2] == "squeeze_recover"  # no list tool
    refused = run_cli(
        "wrap", *options(tmp_path, "--compress-tools", "low", "--server-name", "a b"), "--", *demo_server()
    )
    assert refused.returncode == 2 and "--server-name" in refused.stderr


@pytest.mark.anyio
async def test_a_2026_client_over_stdio_gets_the_schema_before_any_listing_and_then_the_listing(
    tmp_path: Path,
) -> None:
    """The proxy's own tools/list to a 2026-07-28 backend carries the client's envelope (else refused)."""
    async with Client(
        wrap_transport(options(tmp_path, "--compress-tools", "medium", "--name", "demo"))
    ) as client:
        assert client.protocol_version == MODERN
        schema = await client.call_tool("demo_get_tool_schema", {"tool_name": "echo"})
        listed = [t.name for t in (await client.list_tools()).tools]
        echoed = await client.call_tool(
            "demo_invoke_tool", {"tool_name": "echo", "tool_input": {"text": "hi"}}
        )
    assert schema.content[0].text.startswith("echo(text: string):")  # type: ignore[union-attr]
    assert listed == ["demo_get_tool_schema", "demo_invoke_tool", "squeeze_recover"]
    assert echoed.content[0].text == "hi"  # type: ignore[union-attr]


def test_every_page_of_the_backends_listing_is_compressed_and_its_own_squeeze_recover_stays_reachable(
    tmp_path: Path,
) -> None:
    with in_process(
        tmp_path, "--compress-tools", "high", "--name", "p", target=[*CHANGING, "--pages"]
    ) as client:
        client.initialize()
        listed = client.result("tools/list")
        called = invoke(client, "p", "tool_1", {"n": 1})
    assert "nextCursor" not in listed
    assert listed["tools"][0]["description"].endswith("Its tools:\ngrow()\ntool_1(n)")
    assert json.loads(text(called["result"])) == {"name": "tool_1", "arguments": {"n": 1}}
    pages = [
        sys.executable,
        str(Path(__file__).parents[1] / "fixtures" / "pages_backend.py"),
        "--own-recover",
    ]
    with in_process(tmp_path, "--compress-tools", "medium", "--name", "p", target=pages) as client:
        client.initialize()
        names = [t["name"] for t in client.result("tools/list")["tools"]]
        theirs = invoke(client, "p", "squeeze_recover", {})
    assert names == ["p_get_tool_schema", "p_invoke_tool", "squeeze_recover_2"]
    assert text(theirs["result"]) == "the backend's own squeeze_recover"
