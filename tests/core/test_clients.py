"""The client profiles (_clients.py): the table, how a client is recognised, what its model sees,
and the pure helpers that fit answers to it."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from mcpsqueeze._clients import (
    MARGIN,
    MAX_RESULT_SIZE_KEY,
    PROFILES,
    ClientLimits,
    ClientProfile,
    arrange,
    choose,
    client_info_of,
    listed_for,
    match_client,
    model_of,
    model_view,
    page_chars,
    record_first,
)
from rawclient import assert_golden

BY_NAME = {p.name: p for p in PROFILES}


def test_every_profile_names_its_sources_for_who_it_is_and_what_its_model_sees() -> None:
    for profile in PROFILES:
        assert profile.names, profile.name
        assert {"clientInfo.name", "model sees"} <= set(profile.sources), profile.name
        if profile.limits != ClientLimits():
            assert "limits" in profile.sources, profile.name
    assert len({p.name for p in PROFILES}) == len(PROFILES)


@pytest.mark.parametrize(
    ("sent", "profile"),
    [
        ("claude-code", "claude-code"),
        ("Claude-Code", "claude-code"),
        ("codex-mcp-client", "codex"),
        ("codex-vscode", "codex"),
        ("github-copilot-developer", "copilot-cli"),
        ("Visual Studio Code - Insiders", "vscode"),
        ("qwen-cli-mcp-client-fs", "qwen-code"),
        ("gemini-cli-mcp-client", "gemini-cli"),
        ("opencode", "opencode"),
        ("cursor-vscode", "cursor"),
        ("claude-ai", None),
        ("mcp-inspector", None),
        ("", None),
    ],
)
def test_a_client_is_recognised_by_its_name_loosely_and_an_unknown_one_gets_no_profile(
    sent: str, profile: str | None
) -> None:
    found = match_client(sent)
    assert (found.name if found else None) == profile


def test_the_setting_names_a_profile_turns_them_off_or_leaves_the_choice_to_the_client() -> None:
    claude = {"name": "claude-code", "version": "2.1.332"}
    assert choose("auto", claude).profile is BY_NAME["claude-code"]
    assert "clientInfo.name 'claude-code' 2.1.332" in choose("auto", claude).describe()
    assert choose("none", claude).profile is None
    assert choose("codex", claude).profile is BY_NAME["codex"]
    assert choose("auto", {"name": "some-agent"}).profile is None
    assert "is not a known client" in choose("auto", {"name": "some-agent"}).describe()
    assert choose("auto", None).profile is None


def test_client_info_is_read_from_initialize_params_and_from_a_2026_request_envelope() -> None:
    info = {"name": "codex-mcp-client", "version": "0.171.0"}
    assert client_info_of({"clientInfo": info, "protocolVersion": "2025-11-25"}) == info
    assert client_info_of({"_meta": {"io.modelcontextprotocol/clientInfo": info}}) == info
    assert client_info_of({"name": "x"}) is None
    assert client_info_of(None) is None


def test_codex_limits_follow_the_model_a_call_names_in_its_turn_metadata() -> None:
    codex = BY_NAME["codex"]
    assert codex.for_call(None).limits == ClientLimits(bytes=12_000)
    assert codex.for_call({"x-codex-turn-metadata": {"model": "my-local-llama"}}).limits == ClientLimits(
        bytes=12_000
    )
    listed = codex.for_call({"x-codex-turn-metadata": json.dumps({"model": "gpt-5.1-codex"})})
    assert listed.limits == ClientLimits(bytes=48_000)
    assert model_of({"x-codex-turn-metadata": "not json"}) is None


def test_the_model_of_a_client_that_shows_structured_content_reads_its_json_unless_it_is_an_error() -> None:
    result = {"content": [{"type": "text", "text": "CONTENT"}], "structuredContent": {"marker": "STRUCT"}}
    assert model_view(result, BY_NAME["claude-code"]) == ('{"marker":"STRUCT"}', "structuredContent")
    assert model_view(result, BY_NAME["copilot-cli"]) == ('CONTENT\n{"marker":"STRUCT"}', "both")
    assert model_view(result, BY_NAME["gemini-cli"]) == ("CONTENT", "text")
    assert model_view(result, None) == ("CONTENT", "text")
    assert model_view({**result, "isError": True}, BY_NAME["codex"]) == ("CONTENT", "text")


def test_limits_measure_characters_bytes_and_lines_and_count_a_token_per_character_at_most() -> None:
    assert ClientLimits(bytes=10).fits("é" * 5) and not ClientLimits(bytes=10).fits("é" * 6)
    assert ClientLimits(lines=2).fits("a\nb") and not ClientLimits(lines=2).fits("a\nb\nc")
    assert ClientLimits(tokens=3).over("abcdef") == 2.0
    assert ClientLimits(chars=50_000, tokens=25_000).scaled(MARGIN).budget == 22_500
    assert ClientLimits().fits("x" * 10**6) and ClientLimits().budget is None


def test_recover_pages_fit_the_bytes_and_lines_of_the_client_with_room_for_their_note() -> None:
    ascii_text = "x" * 50_000
    assert page_chars(ascii_text, ClientLimits(bytes=10_800), 40_000) == 9_800
    accented = "é" * 50_000  # two bytes a character
    size = page_chars(accented, ClientLimits(bytes=10_800), 40_000)
    assert all(len(accented[i : i + size].encode()) <= 9_800 for i in range(0, len(accented), size))
    assert size > 4_000
    lines = "1\n" * 30_000
    size = page_chars(lines, ClientLimits(chars=22_500, lines=900), 40_000)
    assert all(lines[i : i + size].count("\n") + 1 <= 897 for i in range(0, len(lines), size))


def test_a_changed_result_is_one_block_that_opens_with_its_hint() -> None:
    head = "[mcpsqueeze] shrunk from 9 chars; full original: squeeze_recover {...}"
    assert arrange(["a", "b"], None, head) == f"{head}\na\nb"
    assert arrange(["[1,2]"], "[mcpsqueeze] notice", head) == "[mcpsqueeze] notice\n[1,2]"
    outline = "[mcpsqueeze] Outline of 90 lines ...\nline"
    assert arrange([outline], None, head) == outline
    assert arrange(['{"truncation":{},"a":1}'], None, head) == '{"truncation":{},"a":1}'


def test_a_json_objects_record_moves_to_its_front_and_it_stays_the_same_object() -> None:
    record = {"message": "Shrunk ...", "response_id": "r" * 32}
    text = '{"a":[1,2],"truncation":' + json.dumps(record, separators=(",", ":")) + "}"
    first = record_first(text, record)
    assert first.startswith('{"truncation":') and json.loads(first) == json.loads(text)
    assert len(first) == len(text)
    assert record_first('{"a":1,"truncation":{"other":1}}', record) == '{"a":1,"truncation":{"other":1}}'
    assert record_first("[1,2]", record) == "[1,2]"


def test_the_listing_withholds_output_schemas_the_client_would_check_and_declares_our_largest_answer() -> (
    None
):
    tools = [
        {"name": "read", "outputSchema": {"type": "object"}},
        {"name": "untouched", "outputSchema": {"type": "object"}},
        {"name": "squeeze_recover", "inputSchema": {}},
    ]

    def may_change(name: str) -> bool:
        return name != "untouched"

    claude = listed_for(BY_NAME["claude-code"], tools, ["squeeze_recover"], 40_000, may_change)
    assert "outputSchema" not in claude[0] and "outputSchema" in claude[1]
    declared = claude[2]["_meta"][MAX_RESULT_SIZE_KEY]
    assert declared * MARGIN >= 40_000 + 900 and declared <= 500_000
    codex = listed_for(BY_NAME["codex"], tools, ["squeeze_recover"], 40_000, may_change)
    assert "outputSchema" not in codex[0] and "_meta" not in codex[2]
    assert listed_for(BY_NAME["gemini-cli"], tools, ["squeeze_recover"], 40_000, may_change) == tools
    assert listed_for(None, tools, ["squeeze_recover"], 40_000, may_change) is tools


def test_the_profile_says_in_one_line_what_its_model_sees_and_what_answers_fit() -> None:
    line = choose("auto", {"name": "codex-mcp-client", "version": "0.171.0"}).describe()
    assert line == (
        "client profile codex (clientInfo.name 'codex-mcp-client' 0.171.0): its model sees the JSON of "
        "structuredContent when a result has one (else the text); it keeps 12,000 bytes per result and cuts "
        "out the middle; answers fit 10,800 bytes"
    )


_SHOWS = {"text": "text", "structured": "structuredContent (else text)", "both": "text and structuredContent"}
_CHECKS = {True: "yes", False: "no", None: "not known"}


def profiles_markdown() -> str:
    """The profiles table and each row's sources, as docs/clients.md shows them (a test keeps the two
    the same)."""
    lines = [
        "| `client` | client | `clientInfo.name` | its model sees | keeps whole | past that | reads "
        "`maxResultSizeChars` | checks `outputSchema` | checked on |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for p in PROFILES:
        cells = [
            f"`{p.name}`",
            p.title,
            ", ".join(f"`{n}`" for n in p.names),
            _SHOWS[p.shows],
            _kept_whole(p),
            p.cut,
            "yes" if p.reads_max_result_size else "no",
            _CHECKS[p.validates_output_schema],
            p.versions,
        ]
        lines.append("| " + " | ".join(cells) + " |")
    lines.append("")
    for p in PROFILES:
        lines.append(
            f"- **{p.title}**: " + "; ".join(f"{fact}: {source}" for fact, source in p.sources.items()) + "."
        )
    return "\n".join(lines) + "\n"


def _kept_whole(p: ClientProfile) -> str:
    """What a client keeps whole, in words (the docs' table)."""
    kept = p.limits.describe()
    if p.per == "block" and p.limits != ClientLimits():
        kept += " per text block"
    if p.error_limits is not None:
        kept += f" (an error: {p.error_limits.describe()})"
    return kept


def test_the_docs_show_the_profiles_table_as_it_is() -> None:
    from rawclient import ROOT

    doc = (ROOT / "docs" / "clients.md").read_text(encoding="utf-8")
    start = doc.index("<!-- client-profiles")
    shown = doc[doc.index("\n", start) + 1 : doc.index("<!-- /client-profiles -->")]
    assert shown == profiles_markdown(), "docs/clients.md's profiles table is out of step with _clients.py"


GOLDEN = Path(__file__).with_name("golden")


def _masked(text: str) -> str:
    return re.sub(r"[0-9a-f]{32}", "RID", text)


@pytest.mark.anyio
async def test_what_a_profiles_model_reads_of_changed_results_is_pinned() -> None:
    from mcpsqueeze import Squeezer

    lines = "".join(f"step {i}: compile module_{i}.py ... ok ({i % 7} warnings)\n" for i in range(300))
    rows = [{"id": i, "state": "ok" if i % 4 else "failed", "ms": i * 3 % 101} for i in range(300)]
    codex = Squeezer(budget=2000, client="codex")
    text = await codex.present("ci", "log", {}, {"content": [{"type": "text", "text": lines}]})
    array = await codex.present("db", "rows", {}, {"content": [{"type": "text", "text": json.dumps(rows)}]})
    claude = Squeezer(budget=2000, client="claude-code")
    structured = await claude.present(
        "db",
        "report",
        {},
        {"content": [{"type": "text", "text": "300 rows"}], "structuredContent": {"rows": rows}},
    )
    shown = [
        text["content"][0]["text"],
        array["content"][0]["text"],
        json.dumps(structured["structuredContent"], separators=(",", ":")),
    ]
    assert all(len(t) <= 2000 for t in shown[:2])
    assert_golden(GOLDEN / "client_profile_answers.txt", _masked("\n\n=====\n\n".join(shown)) + "\n")
    codex.close()
    claude.close()
