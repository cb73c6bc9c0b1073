"""Squeezer: a host with a result in hand presents it and recovers the original, in process."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mcpsqueeze import RecoveryError, Squeezer, UsageError

pytestmark = pytest.mark.anyio

TEXT = json.dumps({"items": [{"n": i, "word": "squeeze " * 5} for i in range(1500)]})


async def test_present_shrinks_a_result_dict_and_recover_returns_its_text() -> None:
    squeezer = Squeezer(budget=3000)
    result = {"content": [{"type": "text", "text": TEXT}], "isError": False}
    presented = await squeezer.present("github", "search", {"q": "x"}, result)
    assert len(presented["content"][0]["text"]) <= 3000
    rid = presented["_meta"]["truncation"]["response_id"]
    assert squeezer.recover(rid) == TEXT
    assert squeezer.recover(rid, pointer="/items/3/n") == "3"
    assert squeezer.recover(rid, offset=5, length=5) == TEXT[5:10]
    assert squeezer.original(rid) == result
    squeezer.close()


async def test_present_takes_an_sdk_call_tool_result() -> None:
    from mcp_types import CallToolResult, TextContent

    squeezer = Squeezer(budget=3000)
    presented = await squeezer.present(
        "s", "t", {}, CallToolResult(content=[TextContent(type="text", text=TEXT)])
    )
    assert squeezer.recover(presented["_meta"]["truncation"]["response_id"]) == TEXT
    squeezer.close()


async def test_files_recovery_names_the_file_and_a_repeat_shares_it(tmp_path: Path) -> None:
    squeezer = Squeezer(budget=3000, recovery="both", recovery_dir=tmp_path / "rec")
    result = {"content": [{"type": "text", "text": TEXT}]}
    first = (await squeezer.present("s", "t", {}, result))["_meta"]["truncation"]
    again = (await squeezer.present("s", "t", {}, result))["_meta"]["truncation"]
    assert json.loads(Path(first["original_response_file"]).read_text()) == result
    assert again["original_response_file"] == first["original_response_file"]
    assert squeezer.recover(again["response_id"]) == TEXT
    squeezer.close()


async def test_recovering_a_malformed_or_unknown_id_raises() -> None:
    squeezer = Squeezer()
    with pytest.raises(UsageError, match="32 hex characters"):
        squeezer.recover("abc")
    with pytest.raises(RecoveryError, match="Unknown response id"):
        squeezer.recover("f" * 32)
    squeezer.close()


def test_bad_settings_are_refused() -> None:
    with pytest.raises(UsageError, match="recovery must be"):
        Squeezer(recovery="disk")  # type: ignore[arg-type]
    with pytest.raises(UsageError, match="cache_entries must be at least 1"):
        Squeezer(cache_entries=0)


async def test_recover_by_lines_returns_exactly_the_lines_a_fold_marker_names() -> None:
    source = "".join(f"def function_{i}(x):\n    return x + {i}\n\n" for i in range(600))
    squeezer = Squeezer(budget=3000)
    result = {"content": [{"type": "text", "text": source}], "isError": False}
    presented = await squeezer.present("fs", "read_text_file", {"path": "big.py"}, result)
    preview = presented["content"][0]["text"]
    assert len(preview) <= 3000 and "folded" in preview
    rid = presented["_meta"]["truncation"]["response_id"]
    lines = source.splitlines(keepends=True)
    assert squeezer.recover(rid, lines="120-180") == "".join(lines[119:180])
    with pytest.raises(UsageError):
        squeezer.recover(rid, lines="120-180", offset=0)
    squeezer.close()


async def test_a_client_profile_shapes_what_its_model_reads_and_fits_every_answer() -> None:
    squeezer = Squeezer(client="codex")
    text = "".join(f"élément {i} : « prêt »\n" for i in range(3000))
    result = {"content": [{"type": "text", "text": text}], "structuredContent": {"content": text}}
    presented = await squeezer.present("fs", "read_text_file", {"path": "x"}, result)
    assert "structuredContent" not in presented and len(presented["content"]) == 1
    assert len(presented["content"][0]["text"].encode()) <= 10_800  # Codex keeps 12,000 bytes
    rid = presented["_meta"]["truncation"]["response_id"]
    page = squeezer.answer_recover({"response_id": rid})
    assert len("\n".join(b["text"] for b in page["content"]).encode()) <= 10_800
    assert squeezer.original(rid) == result
    assert Squeezer().client is None  # no profile unless one is named: a library has no initialize
    with pytest.raises(UsageError, match="client must be one of"):
        Squeezer(client="some-agent")
    squeezer.close()
