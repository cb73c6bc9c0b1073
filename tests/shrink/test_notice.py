"""The agent-facing texts, pinned by golden files (``MCPSQUEEZE_UPDATE_GOLDEN=1`` rewrites them)."""

from __future__ import annotations

import json
from collections.abc import Callable

from mcpsqueeze._voice import McpVoice, ShellVoice
from mcpsqueeze.shrink import RecoveryHint, Report, render_message, render_text_marker, shrink_texts

Golden = Callable[[str, str], None]
RESPONSE_ID = "0123456789abcdef0123456789abcdef"
FILE = f"/home/agent/.cache/mcpsqueeze/recovery/mcpsqueeze-{RESPONSE_ID}.json"

REPORT = Report(
    pruned=True,
    fits=True,
    original_chars=84022,
    shown_chars=19996,
    items_omitted=287,
    keys_omitted=4,
    strings_truncated=12,
    dropped_fields=("body", "headers"),
    strategy="json:items=13,strings=200",
)


def test_mcp_message_names_the_cuts_the_recover_tool_and_the_file(golden: Golden) -> None:
    hint = RecoveryHint(RESPONSE_ID, FILE, McpVoice(), pointer="/issues/0")
    golden("message_mcp_file.txt", render_message(REPORT, hint, "json"))


def test_mcp_message_without_a_file_only_names_the_tool(golden: Golden) -> None:
    hint = RecoveryHint(RESPONSE_ID, None, McpVoice("squeeze_recover_2"), pointer="/0/name")
    message = render_message(REPORT, hint, "json")
    assert "squeeze_recover_2" in message and "File:" not in message
    golden("message_mcp_memory.txt", message)


def test_shell_message_names_the_cli_command_jq_and_pointer(golden: Golden) -> None:
    hint = RecoveryHint(RESPONSE_ID, FILE, ShellVoice(), pointer="/issues/0")
    message = render_message(REPORT, hint, "json")
    assert f"mcpsq recover {RESPONSE_ID}" in message and f"jq -rj '.content[0].text' {FILE}" in message
    assert "jq . " not in message  # the file is the whole MCP result: `jq . FILE` shows the envelope
    assert message.endswith("; one part: --pointer /issues/0.")
    golden("message_shell_file.txt", message)


def test_compact_messages_are_one_sentence_and_the_exact_call(golden: Golden) -> None:
    mcp = render_message(REPORT, RecoveryHint(RESPONSE_ID, FILE, McpVoice()), "json", compact=True)
    shell = render_message(REPORT, RecoveryHint(RESPONSE_ID, FILE, ShellVoice()), "json", compact=True)
    assert f'squeeze_recover {{"response_id":"{RESPONSE_ID}"}}' in mcp and FILE not in mcp
    assert f"mcpsq recover {RESPONSE_ID}" in shell and f"jq -rj '.content[0].text' {FILE}" in shell
    assert "jq . " not in shell
    assert len(mcp) < 180 and len(shell) < 260
    golden("message_compact.txt", f"{mcp}\n{shell}\n")


def test_text_message_says_the_middle_was_cut(golden: Golden) -> None:
    hint = RecoveryHint(RESPONSE_ID, None, ShellVoice())
    report = Report(True, True, 50000, 1000, 0, 0, 0, (), "text:head-tail")
    golden("message_shell_text.txt", render_message(report, hint, "text"))


def test_message_for_a_compacted_document_says_nothing_was_omitted() -> None:
    report = Report(False, True, 30000, 9000, 0, 0, 0, (), "json:compact")
    message = render_message(report, RecoveryHint(RESPONSE_ID, None, McpVoice()), "json")
    assert "only whitespace removed" in message


def test_text_markers_carry_the_exact_count_and_the_recovery_route(golden: Golden) -> None:
    mcp = render_text_marker(12345, RecoveryHint(RESPONSE_ID, FILE, McpVoice()))
    shell = render_text_marker(12345, RecoveryHint(RESPONSE_ID, FILE, ShellVoice()))
    assert mcp.startswith("[...truncated 12345 characters; recover with ")
    golden("text_marker.txt", f"{mcp}\n{shell}\n")


def test_array_notice_and_record_of_a_shrunk_array(golden: Golden) -> None:
    items = [{"id": i, "name": f"item {i}", "note": "x" * (i % 7)} for i in range(400)]
    result = shrink_texts([json.dumps(items)], 2000, RecoveryHint(RESPONSE_ID, FILE, McpVoice()))
    assert result is not None and result.notice is not None
    golden("notice_array.txt", result.notice + "\n" + json.dumps(result.truncation, indent=2) + "\n")


def test_object_preview_snapshot(golden: Golden) -> None:
    doc = {
        "total": 120,
        "issues": [
            {"key": f"PROJ-{i}", "summary": f"Fix thing {i}", "body": "lorem ipsum dolor " * (i % 9)}
            for i in range(120)
        ],
        "nextPageToken": "opaque",
    }
    result = shrink_texts([json.dumps(doc)], 1500, RecoveryHint(RESPONSE_ID, FILE, McpVoice()))
    assert result is not None
    golden("object_preview.json", result.texts[0] + "\n")


def _pointer_in(message: str, mode: str) -> str | None:
    import re

    found = re.search(r'"pointer":"([^"]*)"' if mode == "mcp" else r"--pointer (\S+?)\.?$", message)
    return found.group(1) if found else None


def _resolves(document: object, pointer: str) -> bool:
    from mcpsqueeze._errors import RecoveryError
    from mcpsqueeze.recovery import resolve_pointer

    try:
        resolve_pointer(document, pointer)
    except RecoveryError:
        return False
    return True


VOICES = {"mcp": McpVoice(), "shell": ShellVoice()}


def test_the_hint_offers_a_pointer_that_exists_in_an_array_rooted_result() -> None:
    rows = [{"id": i, "name": f"row {i}", "tags": ["a"] * 5} for i in range(500)]
    for mode in ("mcp", "shell"):
        shrunk = shrink_texts([json.dumps(rows)], 4000, RecoveryHint(RESPONSE_ID, FILE, VOICES[mode]))
        assert shrunk is not None
        pointer = _pointer_in(str(shrunk.truncation["message"]), mode)
        assert pointer is not None and _resolves(rows, pointer), (mode, pointer)
        assert pointer.startswith("/0")


def test_the_hint_offers_a_pointer_that_exists_in_an_object_rooted_result() -> None:
    doc = {"total": 3, "issues": [{"key": f"K-{i}", "body": "b" * 200} for i in range(300)]}
    for mode in ("mcp", "shell"):
        shrunk = shrink_texts([json.dumps(doc)], 4000, RecoveryHint(RESPONSE_ID, FILE, VOICES[mode]))
        assert shrunk is not None
        pointer = _pointer_in(str(shrunk.truncation["message"]), mode)
        assert pointer is not None and _resolves(doc, pointer), (mode, pointer)
        assert pointer.startswith("/issues/0")


def test_a_text_result_is_offered_no_pointer_at_all() -> None:
    text = "line of plain text\n" * 4000
    for mode in ("mcp", "shell"):
        shrunk = shrink_texts([text], 4000, RecoveryHint(RESPONSE_ID, FILE, VOICES[mode]))
        assert shrunk is not None
        message = str(shrunk.truncation["message"])
        assert "pointer" not in message and "/a/0/b" not in message and "/path/0" not in message


def test_the_shell_notice_quotes_a_file_path_the_shell_would_split() -> None:
    hint = RecoveryHint(RESPONSE_ID, "/tmp/my dir/x.json", ShellVoice())
    for compact in (False, True):
        message = render_message(REPORT, hint, "json", compact=compact)
        assert "jq -rj '.content[0].text' '/tmp/my dir/x.json'" in message
