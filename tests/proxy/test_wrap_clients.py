"""What each client's model gets through `wrap`: the profile its `initialize` names (docs/clients.md).

A whole session per profile (in process, over memory pipes, against a server whose results carry
structuredContent the ways real servers send it): every answer is cut the way that client documents
its cut, and nothing is cut; every changed result opens with its recovery hint, so a cut at a quarter
of the client's limit still keeps it. Then what each door does with the profile: the listing, the
structured results, the recover pages, the log line and the counts.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from mcpsqueeze._clients import MAX_RESULT_SIZE_KEY, PROFILES, ClientLimits, ClientProfile
from memwrap import FIXTURES, MemoryWrap
from rawclient import RawClient

SERVER = [sys.executable, str(FIXTURES / "structured_server.py")]
BY_NAME = {p.name: p for p in PROFILES}
FITTED = [p for p in PROFILES if p.limits != ClientLimits()]  # the clients that cut


def seen(result: dict[str, Any], profile: ClientProfile) -> str:
    """What the client's model reads, as docs/clients.md says (not our code's reading of it)."""
    text = "\n".join(b["text"] for b in result.get("content", []) if b.get("type") == "text")
    structured = result.get("structuredContent")
    if profile.shows == "text" or structured is None or result.get("isError"):
        return text
    shown = json.dumps(structured, ensure_ascii=False, separators=(",", ":"))
    return f"{text}\n{shown}" if profile.shows == "both" else shown


def cut(text: str, profile: ClientProfile, share: float = 1.0, declared: int | None = None) -> str:
    """``text`` after ``profile``'s client cut it at ``share`` of its documented limits (of the
    ``declared`` maxResultSizeChars, for a tool whose listing declares it to a client that reads it)."""
    limits = profile.limits
    if declared is not None and profile.reads_max_result_size:
        limits = ClientLimits(chars=declared)
    limits = limits.scaled(share)
    if limits.fits(text):
        return text
    if profile.cut == "file":  # a file, and a preview of its head
        return text[:2000]
    size = limits.budget or len(text)
    if limits.lines is not None:
        size = min(size, len("\n".join(text.split("\n")[: limits.lines])))
    if profile.cut == "middle":
        return text[: size // 2] + text[-(size // 2) :]
    if profile.cut == "head":
        return text[:size]
    if profile.cut == "head-tail":
        return text[: size // 5] + text[-(size * 4 // 5) :]
    return text


#: The calls of the session whose originals it asks for again with `full`.
FULL = [("read_text", {"lines": 2000}), ("graph", {"n": 400}), ("accented", {"lines": 2000})]


def full(client: RawClient, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """A plain tools/call asking for the original of the same call (`_meta["mcpsqueeze/full"]`)."""
    return client.result(
        "tools/call", {"name": tool, "arguments": arguments, "_meta": {"mcpsqueeze/full": True}}
    )


def session(client: RawClient) -> list[tuple[str, dict[str, Any]]]:
    """A session's tool calls and the recoveries an agent makes of what changed: every answer, with the
    tool that gave it."""
    answers = [
        (tool, client.call(tool, arguments))
        for tool, arguments in [
            ("read_text", {"lines": 2000}),
            ("fs_read", {"lines": 1500}),
            ("graph", {"n": 400}),
            ("report", {"rows": 600}),
            ("accented", {"lines": 2000}),
            ("short_lines", {"lines": 3000}),
            ("read_text", {"lines": 2000}),  # a repeat
            ("read_text", {"lines": 5}),
            ("graph", {"n": 2}),
            ("fail", {"lines": 300}),
        ]
    ]
    answers += [(tool, full(client, tool, arguments)) for tool, arguments in FULL]
    recover = "squeeze_recover"
    for _, answer in list(answers):
        record = (answer.get("_meta") or {}).get("truncation")
        if not record:
            continue
        answers += [(recover, page) for page in _every_page(client, {"response_id": record["response_id"]})]
        answers.append((recover, client.call(recover, {"response_id": record["response_id"], "grep": "1"})))
    return answers


def _every_page(client: Any, arguments: dict[str, Any]) -> list[dict[str, Any]]:
    """Every page of one recover answer, following `_meta["mcpsqueeze/next"]`."""
    pages = []
    while arguments:
        pages.append(client.call("squeeze_recover", arguments))
        arguments = (pages[-1].get("_meta") or {}).get("mcpsqueeze/next") or {}
    return pages


@pytest.mark.parametrize("profile", FITTED, ids=[p.name for p in FITTED])
def test_no_answer_of_a_whole_session_is_cut_by_the_clients_own_cut_and_every_hint_stands_first(
    tmp_path: Path, profile: ClientProfile
) -> None:
    with MemoryWrap(["--recovery-dir", str(tmp_path / "rec")], target=SERVER) as client:
        client.initialize(client=profile.names[0])
        listed = {t["name"]: t for t in client.result("tools/list")["tools"]}
        answers = session(client)
    changed = 0
    for tool, answer in answers:
        text = seen(answer, profile)
        declared = (listed[tool].get("_meta") or {}).get(MAX_RESULT_SIZE_KEY)
        kept = profile.for_error() if answer.get("isError") else profile
        assert cut(text, kept, declared=declared) == text, f"{profile.name} cuts {tool}'s {len(text)} chars"
        meta = answer.get("_meta") or {}
        record = meta.get("truncation")
        if record and (record["report"].get("pruned") if "report" in record else "mcpsqueeze/dedup" in meta):
            changed += 1  # (a shrunk result or a pointer: one whose text is not the whole original)
            assert record["response_id"] in cut(text, kept, share=0.25), text[:300]
    assert changed >= 8


def test_the_listing_withholds_output_schemas_from_a_client_that_shows_structured_content(
    tmp_path: Path,
) -> None:
    listings = {}
    for name in ("claude-code", "codex-mcp-client", "some-agent"):
        with MemoryWrap(["--recovery-dir", str(tmp_path / "rec")], target=SERVER) as client:
            client.initialize(client=name)
            listings[name] = {t["name"]: t for t in client.result("tools/list")["tools"]}
    claude, codex, other = listings["claude-code"], listings["codex-mcp-client"], listings["some-agent"]
    assert not [n for n, t in claude.items() if "outputSchema" in t]
    assert not [n for n, t in codex.items() if "outputSchema" in t]
    assert "outputSchema" in other["read_text"] and "outputSchema" in other["report"]
    declared = claude["squeeze_recover"]["_meta"][MAX_RESULT_SIZE_KEY]
    assert 40_000 < declared <= 500_000
    assert "_meta" not in codex["squeeze_recover"] and "_meta" not in other["squeeze_recover"]


def test_structured_content_that_repeats_the_text_is_dropped_and_one_that_differs_is_previewed(
    tmp_path: Path,
) -> None:
    with MemoryWrap(
        ["--recovery-dir", str(tmp_path / "rec"), "--log-level", "info"], target=SERVER
    ) as client:
        client.initialize(client="claude-code")
        read = client.call("read_text", {"lines": 2000})
        small = client.call("read_text", {"lines": 5})
        report = client.call("report", {"rows": 600})
        back = client.call("squeeze_recover", {"response_id": read["_meta"]["truncation"]["response_id"]})
        report_id = report["_meta"]["truncation"]["response_id"]
    assert "structuredContent" not in read and len(read["content"]) == 1
    assert read["content"][0]["text"].startswith("[mcpsqueeze] ")
    assert "structuredContent" not in small  # small, but the model would read it as escaped JSON
    assert small["_meta"]["truncation"]["structured_content_dropped"] is True
    assert back["content"][0]["text"].startswith("def handler_0(request)")
    stored = json.loads((tmp_path / "rec" / f"mcpsqueeze-{report_id}.json").read_text())
    assert len(stored["structuredContent"]["rows"]) == 600  # the original, structuredContent included
    preview = report["structuredContent"]
    assert next(iter(preview)) == "truncation" and preview["truncation"]["response_id"] == report_id
    compact = {"separators": (",", ":"), "ensure_ascii": False}
    assert (
        len(json.dumps(preview, **compact))
        <= 20_000
        < len(json.dumps(stored["structuredContent"], **compact))
    )
    assert "client profile claude-code (clientInfo.name 'claude-code' 1)" in client.stderr


def _report_as(client: Any, profile: ClientProfile) -> tuple[Any, str]:
    """Open the session as `profile`'s client and call `report` for 600 rows: the size the recover tool
    declares to it, and the id of the stored original."""
    client.initialize(client=profile.names[0])
    listed = {t["name"]: t for t in client.result("tools/list")["tools"]}
    declared = (listed["squeeze_recover"].get("_meta") or {}).get(MAX_RESULT_SIZE_KEY)
    return declared, client.call("report", {"rows": 600})["_meta"]["truncation"]["response_id"]


def _views_kept_whole(pages: list[dict[str, Any]], profile: ClientProfile, declared: Any) -> list[str]:
    """What the client's model sees of each page, asserting the client's own cut leaves each whole."""
    views = [seen(page, profile) for page in pages]
    assert all(cut(view, profile, declared=declared) == view for view in views)
    return views


@pytest.mark.parametrize("name", ["claude-code", "codex"])
def test_recovering_the_whole_original_gives_the_rows_the_clients_model_saw_not_only_the_summary(
    tmp_path: Path, name: str
) -> None:
    profile = BY_NAME[name]
    with MemoryWrap(["--recovery-dir", str(tmp_path / "rec")], target=SERVER) as client:
        declared, response_id = _report_as(client, profile)
        pages = _every_page(client, {"response_id": response_id})
    views = _views_kept_whole(pages, profile, declared)
    rows = json.loads("".join(page["content"][0]["text"] for page in pages))["rows"]
    assert len(rows) == 600 and rows[599]["detail"] == "run 599 took 17 ms"
    assert '"status":"failed"' in views[0]


@pytest.mark.parametrize("name", ["claude-code", "codex"])
def test_grep_in_a_recovery_finds_the_failed_rows_the_clients_model_saw_not_only_the_summary(
    tmp_path: Path, name: str
) -> None:
    profile = BY_NAME[name]
    with MemoryWrap(["--recovery-dir", str(tmp_path / "rec")], target=SERVER) as client:
        declared, response_id = _report_as(client, profile)
        pages = _every_page(client, {"response_id": response_id, "grep": "failed"})
        row = client.call("squeeze_recover", {"response_id": response_id, "pointer": "/rows/595"})
    views = _views_kept_whole(pages, profile, declared)
    assert pages[0]["_meta"]["mcpsqueeze/search"]["total"] == 120
    hits = [line for view in views for line in view.splitlines() if line.endswith('/status: "failed"')]
    assert hits == [f'/rows/{i}/status: "failed"' for i in range(0, 600, 5)]
    assert json.loads(row["content"][0]["text"])["status"] == "failed"


def test_an_unknown_client_gets_results_as_before_and_its_counts_say_nothing_of_a_profile(
    tmp_path: Path,
) -> None:
    results = {}
    for args in ([], ["--client", "none"]):
        with MemoryWrap(["--recovery-dir", str(tmp_path / "rec"), *args], target=SERVER) as client:
            client.initialize(client="some-agent")
            results[tuple(args)] = (
                client.call("read_text", {"lines": 5}),
                client.call("report", {"rows": 600}),
            )
        assert "tokens counted" not in client.stderr
    (small, report), (small_none, report_none) = results.values()
    assert small == small_none and "structuredContent" in small and "_meta" not in small
    assert report["structuredContent"] == report_none["structuredContent"]
    assert len(report["structuredContent"]["rows"]) == 600


def test_codex_recover_pages_fit_its_bytes_and_join_back_into_the_original(tmp_path: Path) -> None:
    with MemoryWrap(["--recovery-dir", str(tmp_path / "rec")], target=SERVER) as client:
        client.initialize(client="codex-mcp-client")
        shrunk = client.call("accented", {"lines": 2000})
        response_id = shrunk["_meta"]["truncation"]["response_id"]
        pages = _every_page(client, {"response_id": response_id})
    assert len("\n".join(b["text"] for b in shrunk["content"]).encode()) <= 10_800
    assert all(len("\n".join(b["text"] for b in p["content"]).encode()) <= 10_800 for p in pages)
    original = "".join(
        f"ligne {i} : résumé des données, élément n°{i} — état « prêt »\n" for i in range(2000)
    )
    assert "".join(p["content"][0]["text"] for p in pages) == original


def test_the_summary_and_stats_lines_count_what_the_clients_model_reads(tmp_path: Path) -> None:
    stats = tmp_path / "stats.jsonl"
    args = ["--recovery-dir", str(tmp_path / "rec"), "--stats-file", str(stats)]
    with MemoryWrap(args, target=SERVER) as client:
        client.initialize(client="claude-code")
        client.call("report", {"rows": 600})
        client.call("read_text", {"lines": 5})
    lines = [json.loads(line) for line in stats.read_text().splitlines()]
    assert [(line["client"], line["seen"]) for line in lines] == [
        ("claude-code", "structuredContent"),
        ("claude-code", "structuredContent"),
    ]
    assert lines[0]["chars_before"] > 20_000  # the rows as JSON, not the one-line summary beside them
    assert "tokens counted   as each client's model reads them (claude-code: 2 calls)" in client.stderr


async def _as(url: str, mode: str, name: str) -> dict[str, Any]:
    """What a client named ``name`` gets over HTTP (``mode``: the protocol revision): the listing, a
    shrunk read through the SDK's own checked call, and a recover page."""
    from mcp import Client
    from mcp_types import Implementation

    async with Client(url, mode=mode, client_info=Implementation(name=name, version="1")) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        read = await client.call_tool("accented", {"lines": 2000})  # checked against outputSchema, if listed
        text = "\n".join(getattr(b, "text", "") for b in read.content)
        response_id = (read.meta or {})["truncation"]["response_id"]
        page = await client.call_tool("squeeze_recover", {"response_id": response_id})
        return {
            "protocol": client.protocol_version,
            "schemas": sorted(n for n, t in tools.items() if t.output_schema is not None),
            "declared": (tools["squeeze_recover"].meta or {}).get(MAX_RESULT_SIZE_KEY),
            "structured": read.structured_content is not None,
            "bytes": len(text.encode()),
            "page_bytes": len("\n".join(getattr(b, "text", "") for b in page.content).encode()),
        }


@pytest.mark.anyio
@pytest.mark.parametrize("mode", ["2026-07-28", "legacy"])
async def test_over_http_each_protocol_revision_gets_the_profile_its_client_names(
    tmp_path: Path, mode: str
) -> None:
    from test_wrap_http import http_proxy_in_process

    with http_proxy_in_process(tmp_path, *SERVER) as (url, _):
        codex = await _as(url, mode, "codex-mcp-client")
        claude = await _as(url, mode, "claude-code")
        other = await _as(url, mode, "some-agent")
    assert codex["protocol"] == claude["protocol"] == ("2026-07-28" if mode != "legacy" else "2025-11-25")
    assert codex["schemas"] == claude["schemas"] == [] and "read_text" in other["schemas"]
    assert not codex["structured"] and not claude["structured"] and other["structured"]
    assert codex["bytes"] <= 10_800 and codex["page_bytes"] <= 10_800
    assert claude["declared"] is not None and codex["declared"] is None is other["declared"]
    assert other["bytes"] > 20_000  # (accented text: its 20,000 characters are more bytes)


def test_the_client_setting_comes_from_its_flag_variable_or_config_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memwrap import wrap_settings

    assert wrap_settings(["--", "server"]).client == "auto"
    assert wrap_settings(["--client", "codex", "--", "server"]).client == "codex"
    monkeypatch.setenv("MCPSQUEEZE_CLIENT", "none")
    assert wrap_settings(["--", "server"]).client == "none"
    monkeypatch.delenv("MCPSQUEEZE_CLIENT")
    config = tmp_path / "config.toml"
    config.write_text('[defaults]\nclient = "claude-code"\n')
    assert wrap_settings(["--config", str(config), "--", "server"]).client == "claude-code"
    import click

    with pytest.raises(click.BadParameter, match='must be one of "auto", "none", "claude-code"'):
        wrap_settings(["--client", "some-agent", "--", "server"])


def test_the_compressed_listing_declares_invoke_and_recover_sizes_and_its_calls_get_the_profile(
    tmp_path: Path,
) -> None:
    args = ["--recovery-dir", str(tmp_path / "rec"), "--compress-tools", "medium"]
    with MemoryWrap(args, target=SERVER) as client:
        client.initialize(client="claude-code")
        tools = {t["name"]: t for t in client.result("tools/list")["tools"]}
        read = client.call("server_invoke_tool", {"tool_name": "read_text", "tool_input": {"lines": 2000}})
    assert (
        tools["server_invoke_tool"]["_meta"][MAX_RESULT_SIZE_KEY]
        == tools["squeeze_recover"]["_meta"][MAX_RESULT_SIZE_KEY]
    )
    assert "structuredContent" not in read and read["content"][0]["text"].startswith("[mcpsqueeze]")


def joined_back(client: Any, page: dict[str, Any]) -> str:
    """A `full` page's exact text (after its note line) and the recover pages it names, joined."""
    text = page["content"][0]["text"].split("\n", 1)[1]
    arguments = page["_meta"].get("mcpsqueeze/next")
    while arguments:
        following = client.call("squeeze_recover", arguments)
        text += following["content"][0]["text"]
        arguments = following["_meta"].get("mcpsqueeze/next")
    return str(text)


@pytest.mark.parametrize("name", ["claude-code", "codex-mcp-client"])
def test_full_through_wrap_answers_the_first_page_the_client_keeps_and_its_pages_join_back(
    tmp_path: Path, name: str
) -> None:
    from fixtures.structured_server import file_text, traceback_text

    profile = BY_NAME["claude-code" if name == "claude-code" else "codex"]
    args = ["--recovery-dir", str(tmp_path / "rec"), "--compress-tools", "medium"]
    with MemoryWrap(args, target=SERVER) as client:
        client.initialize(client=name)

        def invoke(tool: str, arguments: dict[str, Any], **full: bool) -> dict[str, Any]:
            return client.call("server_invoke_tool", {"tool_name": tool, "tool_input": arguments, **full})

        invoke("read_text", {"lines": 2000})
        page = invoke("read_text", {"lines": 2000}, full=True)
        assert page["content"][0]["text"].startswith("[mcpsqueeze] full: the original of this call is")
        assert cut(seen(page, profile), profile) == seen(page, profile)
        assert joined_back(client, page) == file_text(2000)
        error = invoke("fail", {"lines": 300})
    assert error["isError"] is True and error["content"][0]["text"].startswith("[mcpsqueeze]")
    assert cut(seen(error, profile), profile.for_error()) == seen(error, profile)
    record = error["_meta"]["truncation"]
    assert json.loads((tmp_path / "rec" / f"mcpsqueeze-{record['response_id']}.json").read_text()) == {
        "content": [{"type": "text", "text": traceback_text(300)}],
        "isError": True,
    }


def test_under_codex_the_recover_pages_fit_the_model_the_call_names_as_the_full_page_announced(
    tmp_path: Path,
) -> None:
    from fixtures.structured_server import file_text

    model = {"x-codex-turn-metadata": json.dumps({"model": "gpt-5.1-codex"})}
    with MemoryWrap(["--recovery-dir", str(tmp_path / "rec")], target=SERVER) as client:
        client.initialize(client="codex-mcp-client")

        def call(tool: str, arguments: dict[str, Any], **meta: Any) -> dict[str, Any]:
            return client.result(
                "tools/call", {"name": tool, "arguments": arguments, "_meta": {**model, **meta}}
            )

        call("read_text", {"lines": 3000})
        page = call("read_text", {"lines": 3000}, **{"mcpsqueeze/full": True})
        text, pages = page["content"][0]["text"].split("\n", 1)[1], [page]
        arguments = page["_meta"].get("mcpsqueeze/next")
        while arguments:
            pages.append(call("squeeze_recover", arguments))
            text += pages[-1]["content"][0]["text"]
            arguments = pages[-1]["_meta"].get("mcpsqueeze/next")
    gpt = BY_NAME["codex"].for_call(model)
    assert gpt.limits != BY_NAME["codex"].limits
    assert len(pages) == page["_meta"]["mcpsqueeze/page"]["pages"] > 2
    assert all(cut(seen(p, gpt), gpt) == seen(p, gpt) for p in pages)
    assert text == file_text(3000)


@pytest.mark.anyio
async def test_over_stateless_http_full_answers_and_errors_fit_the_client_as_over_stdio(
    tmp_path: Path,
) -> None:
    import mcp_types as types
    from mcp import Client
    from mcp_types import Implementation
    from pydantic import TypeAdapter
    from test_wrap_http import http_proxy_in_process

    from fixtures.structured_server import file_text

    raw: Any = TypeAdapter(dict[str, Any])
    profile = BY_NAME["codex"]
    with http_proxy_in_process(tmp_path, *SERVER) as (url, _):
        codex = Implementation(name="codex-mcp-client", version="1")
        async with Client(url, mode="2026-07-28", client_info=codex) as client:

            async def call(tool: str, arguments: dict[str, Any], full: bool = False) -> dict[str, Any]:
                meta: Any = {"mcpsqueeze/full": True} if full else None
                params = types.CallToolRequestParams(name=tool, arguments=arguments, _meta=meta)
                result: dict[str, Any] = await client.session.send_request(
                    types.CallToolRequest(params=params), raw
                )
                return result

            await call("read_text", {"lines": 2000})
            page = await call("read_text", {"lines": 2000}, full=True)
            error = await call("fail", {"lines": 300})
            text = page["content"][0]["text"].split("\n", 1)[1]
            arguments = page["_meta"].get("mcpsqueeze/next")
            while arguments:
                following = await call("squeeze_recover", arguments)
                text += following["content"][0]["text"]
                arguments = following["_meta"].get("mcpsqueeze/next")
    assert page["content"][0]["text"].startswith("[mcpsqueeze] full: the original of this call is")
    assert cut(seen(page, profile), profile) == seen(page, profile) and text == file_text(2000)
    assert error["isError"] is True and error["content"][0]["text"].startswith("[mcpsqueeze]")
    assert cut(seen(error, profile), profile) == seen(error, profile)


def many_tools(path: Path) -> list[str]:
    """A backend of 400 tools (and one whose description alone is 40,000 characters), for
    `raw_tools_backend`: its command."""
    tools = [
        {
            "name": f"tool_{i}",
            "description": f"Does the work of step {i} of the build, for every target. " + "More. " * 40,
            "inputSchema": {"type": "object", "properties": {"target": {"type": "string"}}},
        }
        for i in range(400)
    ]
    tools.append({"name": "huge", "description": "Explains. " * 4_000, "inputSchema": {"type": "object"}})
    path.write_text(json.dumps(tools))
    return [sys.executable, str(FIXTURES / "raw_tools_backend.py"), str(path)]


def compressed_answers(over: Any) -> list[dict[str, Any]]:
    """The compressed frontend's own answers (the listing of tools, a schema) a session asks for."""
    return [over("raw_list_tools", {}), over("raw_get_tool_schema", {"tool_name": "huge"})]


def check_fitted(answers: list[dict[str, Any]], profile: ClientProfile) -> None:
    for answer in answers:
        text = seen(answer, profile)
        assert cut(text, profile) == text and text.startswith("[mcpsqueeze]"), text[:300]


def test_the_compressed_frontends_own_answers_fit_the_client_over_stdio(tmp_path: Path) -> None:
    args = ["--recovery-dir", str(tmp_path / "rec"), "--compress-tools", "max", "--name", "raw"]
    with MemoryWrap(args, target=many_tools(tmp_path / "tools.json")) as client:
        client.initialize(client="codex-mcp-client")
        client.result("tools/list")
        check_fitted(compressed_answers(client.call), BY_NAME["codex"])


@pytest.mark.anyio
async def test_the_compressed_frontends_own_answers_fit_the_client_over_stateless_http(
    tmp_path: Path,
) -> None:
    from mcp import Client
    from mcp_types import Implementation
    from test_wrap_http import http_proxy_in_process

    extra = ("--compress-tools", "max", "--name", "raw")
    with http_proxy_in_process(tmp_path, *many_tools(tmp_path / "tools.json"), extra=extra) as (url, _):
        codex = Implementation(name="codex-mcp-client", version="1")
        async with Client(url, mode="2026-07-28", client_info=codex) as client:
            await client.list_tools()
            answers = [
                (await client.call_tool(name, arguments)).model_dump(by_alias=True, exclude_none=True)
                for name, arguments in (
                    ("raw_list_tools", {}),
                    ("raw_get_tool_schema", {"tool_name": "huge"}),
                )
            ]
    check_fitted(answers, BY_NAME["codex"])
