"""`mcpsqueeze.core._compressed`: the compressed tool listing of issue 22, on the real servers' tools.

The backend tools are what npm `server-filesystem`, `server-memory` and PyPI `mcp-server-git` list
(tests/core/fixtures/listing/*.json, captured from the running servers); the anchor's listings are what
mcp-compressor 0.38.2 answered tools/list for them at each level (`anchor-0.38.2.json`, same capture).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from mcpsqueeze.accounting._tokens import count_tokens
from mcpsqueeze.core._compressed import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    CompressedToolError,
    CompressedTools,
    first_sentence,
    signature,
)
from mcpsqueeze.core._recover import recover_tool_definition
from rawclient import assert_golden

GOLDEN = Path(__file__).with_name("golden")
FIXTURES = Path(__file__).with_name("fixtures") / "listing"
SERVERS = ("fs", "git", "memory")
LEVELS = ("low", "medium", "high", "max")


def backend(server: str) -> list[dict[str, Any]]:
    tools: list[dict[str, Any]] = json.loads((FIXTURES / f"{server}.json").read_text())["tools"]
    return tools


def anchor() -> dict[str, dict[str, list[dict[str, Any]]]]:
    found: dict[str, dict[str, list[dict[str, Any]]]] = json.loads(
        (FIXTURES / "anchor-0.38.2.json").read_text()
    )
    return found


def model_view(tools: list[dict[str, Any]]) -> str:
    """As scripts/bench/peers.py counts a listing: what a client turns into the model's tool definitions."""
    return json.dumps([{k: t.get(k) for k in ("name", "description", "inputSchema")} for t in tools])


def ours(server: str, level: str) -> list[dict[str, Any]]:
    return [
        *CompressedTools.of(server, level, backend(server)).listing(),
        recover_tool_definition("squeeze_recover"),
    ]


@pytest.mark.parametrize("level", LEVELS)
def test_each_levels_listing_is_pinned_by_its_golden_file(level: str) -> None:
    listed = {server: ours(server, level) for server in SERVERS}
    assert_golden(GOLDEN / f"listing_{level}.json", json.dumps(listed, indent=1, ensure_ascii=False) + "\n")


@pytest.mark.parametrize("level", LEVELS)
def test_the_listing_with_our_recover_tool_costs_at_most_the_anchors_tokens_at_every_level(
    level: str,
) -> None:
    theirs = anchor()[level]
    for server in SERVERS:  # per server, so also in sum
        mine = count_tokens(model_view(ours(server, level)))
        assert mine <= count_tokens(model_view(theirs[server])), (server, level)


@pytest.mark.parametrize("level", LEVELS)
def test_the_frontend_tools_have_the_anchors_names_and_argument_names(level: str) -> None:
    for server in SERVERS:
        theirs = anchor()[level][server]
        mine = CompressedTools.of(server, level, backend(server)).listing()
        assert [t["name"] for t in mine] == [t["name"] for t in theirs]
        for a, b in zip(mine, theirs, strict=True):
            assert list(a["inputSchema"]["properties"]) == list(b["inputSchema"]["properties"])
            assert a["inputSchema"].get("required") == b["inputSchema"].get("required")


def test_medium_shows_each_argument_with_its_type_and_the_first_sentence() -> None:
    listing = CompressedTools.of("fs", "medium", backend("fs")).listing()[0]["description"]
    assert (
        "\nread_text_file(path: string, tail?: number, head?: number): Read the complete contents of a file "
        "from the file system as text\n" in listing
    )
    assert "\nlist_allowed_directories(): Returns the list of directories" in listing
    git = CompressedTools.of("git", "medium", backend("git")).listing()[0]["description"]
    assert "git_log(repo_path: string, max_count?: integer, start_timestamp?: string, " in git  # not |null


def test_the_levels_say_less_and_less_as_the_anchors_do() -> None:
    tools = backend("fs")
    low, medium, high, most = (
        CompressedTools.of("fs", lv, tools).listing()[0]["description"] for lv in LEVELS
    )
    assert "Only works within allowed directories." in low
    assert "Only works within allowed directories" not in medium
    assert "\nread_file(path, tail, head)\n" in high  # the anchor's own signature at high
    assert "\nread_file\nread_text_file\n" in most
    assert len(low) > len(medium) > len(high) > len(most)


def test_get_tool_schema_answers_the_signature_the_whole_description_and_the_schema() -> None:
    compact = CompressedTools.of("fs", "max", backend("fs"))
    texts = [
        compact.schema_answer({"tool_name": name})["content"][0]["text"]
        for name in ("read_text_file", "list_allowed_directories", "edit_file")
    ]
    texts.append(compact.list_answer()["content"][0]["text"])
    assert_golden(GOLDEN / "listing_get_tool_schema.txt", "\n\n----\n\n".join(texts) + "\n")
    first = texts[0]
    assert first.startswith("read_text_file(path: string, tail?: number, head?: number): Read the complete")
    schema = json.loads(first.split("\n\n", 1)[1])
    assert schema == next(t for t in backend("fs") if t["name"] == "read_text_file")["inputSchema"]


def test_an_unknown_tool_is_the_anchors_error_code_naming_the_close_matches_and_the_schema() -> None:
    compact = CompressedTools.of("fs", "medium", backend("fs"))
    for ask in (compact.schema_answer, compact.invoke):
        with pytest.raises(CompressedToolError) as caught:
            ask({"tool_name": "read_txt_file", "tool_input": {}})
        assert caught.value.code == INTERNAL_ERROR
        message = caught.value.message
        assert message.startswith('tool not found: "read_txt_file". Close matches: read_text_file, read_file')
        assert '"required": ["path"]' in message  # the closest match's schema, so one retry suffices
    with pytest.raises(CompressedToolError) as caught:
        compact.invoke({"tool_name": "zzz", "tool_input": {}})
    assert "The fs tools are: read_file, read_text_file," in caught.value.message


def test_bad_tool_input_is_invalid_params_naming_what_is_missing_and_the_schema() -> None:
    compact = CompressedTools.of("fs", "medium", backend("fs"))
    with pytest.raises(CompressedToolError) as caught:
        compact.invoke({"tool_name": "read_text_file", "tool_input": {"pth": "/x"}})
    assert caught.value.code == INVALID_PARAMS
    assert caught.value.message.startswith("validation error: read_text_file: missing path (given pth?). ")
    assert "read_text_file(path: string, tail?: number, head?: number) takes tool_input matching {" in (
        caught.value.message
    )
    with pytest.raises(CompressedToolError) as caught:
        compact.invoke({"tool_name": "read_text_file", "tool_input": "/x"})
    assert caught.value.code == INVALID_PARAMS and "must be a JSON object" in caught.value.message
    with pytest.raises(CompressedToolError) as caught:
        compact.invoke({"tool_input": {}})
    assert caught.value.code == INVALID_PARAMS and caught.value.message == "missing tool_name"
    with pytest.raises(CompressedToolError):
        compact.invoke({"tool_name": "read_text_file", "tool_input": {"path": "/x"}, "full": "yes"})


def test_unknown_arguments_are_refused_only_when_the_schema_allows_no_others() -> None:
    closed = {
        "name": "t",
        "inputSchema": {
            "type": "object",
            "properties": {"path": {"type": "string"}},
            "required": [],
            "additionalProperties": False,
        },
    }
    compact = CompressedTools.of("s", "medium", [closed, {"name": "open", "inputSchema": {"type": "object"}}])
    with pytest.raises(CompressedToolError) as caught:
        compact.invoke({"tool_name": "t", "tool_input": {"paht": 1}})
    assert "unknown argument paht (did you mean path?)" in caught.value.message
    assert compact.invoke({"tool_name": "open", "tool_input": {"anything": 1}}).arguments == {"anything": 1}


def test_invoke_maps_to_the_real_call_with_its_arguments_untouched() -> None:
    compact = CompressedTools.of("fs", "medium", backend("fs"))
    args = {"path": "/x", "head": 3}
    call = compact.invoke({"tool_name": "read_text_file", "tool_input": args, "full": True})
    assert (call.tool, call.arguments, call.full) == ("read_text_file", args, True)
    assert call.arguments is args  # the very object: the backend gets exactly what the agent sent
    assert compact.invoke({"tool_name": "list_allowed_directories"}).arguments == {}  # as the anchor
    assert compact.owns("fs_invoke_tool") and compact.owns("fs_get_tool_schema")
    assert not compact.owns("fs_list_tools") and CompressedTools.of("fs", "max", []).owns("fs_list_tools")


@pytest.mark.parametrize(
    ("text", "sentence"),
    [
        ("Read a file. Then more.", "Read a file"),
        ("Use a glob, e.g. *.py, to match. More.", "Use a glob, e.g. *.py, to match"),
        ("Shows the\n  working tree status", "Shows the working tree status"),
        ("What is it? Nothing.", "What is it?"),
        ("Version 1.2 of it. Next", "Version 1.2 of it"),
        ("", ""),
    ],
)
def test_the_first_sentence_is_cut_where_the_anchor_cuts_it(text: str, sentence: str) -> None:
    assert first_sentence(text) == sentence


def test_signatures_name_unions_arrays_and_missing_types() -> None:
    tool = {
        "name": "t",
        "inputSchema": {
            "type": "object",
            "properties": {
                "a": {"type": "array", "items": {"type": "integer"}},
                "b": {"anyOf": [{"type": "string"}, {"type": "null"}]},
                "c": {},
                "d": {"type": ["string", "number"]},
            },
            "required": ["a", "b"],
        },
    }
    assert signature(tool) == "t(a: integer[], b: string|null, c?: any, d?: string|number)"
    assert signature({"name": "bare"}) == "bare()"
