"""Per-tool policies inside the pipeline, directly (no subprocess): budget, shrink and dedup per server:tool."""

from __future__ import annotations

import json
from typing import Any

import pytest

from mcpsqueeze.core._pipeline import Call
from mcpsqueeze.core._services import build_services, new_pipeline
from mcpsqueeze.settings._file import parse_config_text
from mcpsqueeze.settings._settings import Settings

pytestmark = pytest.mark.anyio

CONFIG = """\
[defaults]
budget = 5000
[policies."s:small"]
budget = 1500
[policies."s:raw"]
shrink = false
[policies."*:nodedup"]
dedup = false
"""


def _big(tag: str = "") -> dict[str, Any]:
    rows = [{"id": i, "name": f"{tag} row {i}", "note": "x" * 40} for i in range(400)]
    return {"content": [{"type": "text", "text": json.dumps(rows)}]}


def _chars(result: dict[str, Any]) -> int:
    return sum(len(b["text"]) for b in result["content"])


async def test_each_tool_gets_the_budget_and_stages_its_policy_gives() -> None:
    config = parse_config_text(CONFIG)
    settings = config.apply(Settings(target=[], recovery="memory"))
    pipeline = new_pipeline(settings, build_services(settings))
    outcomes = {}
    for number, tool in enumerate(["small", "other", "raw", "nodedup", "nodedup", "other"], start=1):
        presented, outcome = await pipeline.present(Call("s", tool, {}, number), _big(tool))
        outcomes[(tool, outcome.action)] = _chars(presented)
    assert outcomes[("small", "shrink")] <= 1500
    assert 1500 < outcomes[("other", "shrink")] <= 5000
    assert outcomes[("raw", "passthrough")] == _chars(_big("raw"))
    assert ("nodedup", "dedup") not in outcomes  # the same result twice, yet no pointer for this tool
    assert ("other", "dedup") in outcomes  # the second `other` repeats the first: deduplicated


async def test_a_policy_can_turn_shrinking_on_for_one_tool_when_the_default_is_off() -> None:
    config = parse_config_text(
        '[defaults]\nshrink = false\n[policies."s:on"]\nshrink = true\nbudget = 2000\n'
    )
    settings = config.apply(Settings.make(recovery="memory", dedup=False))
    pipeline = new_pipeline(settings, build_services(settings))
    off, off_outcome = await pipeline.present(Call("s", "off", {}, 1), _big())
    on, on_outcome = await pipeline.present(Call("s", "on", {}, 2), _big())
    assert off_outcome.action == "passthrough" and _chars(off) == _chars(_big())
    assert on_outcome.action == "shrink" and _chars(on) <= 2000


async def test_toonify_and_truncate_chars_follow_each_tools_policy_and_can_be_lifted() -> None:
    config = parse_config_text(
        "[defaults]\nbudget = 100000\ntruncate_chars = 3000\n"
        '[policies."s:toon"]\ntoonify = true\ntruncate_chars = false\n'
        '[policies."s:tight"]\ntruncate_chars = 1000\n'
    )
    settings = config.apply(Settings.make(recovery="memory", dedup=False))
    pipeline = new_pipeline(settings, build_services(settings))
    toon, toon_outcome = await pipeline.present(Call("s", "toon", {}, 1), _big("t"))
    tight, tight_outcome = await pipeline.present(Call("s", "tight", {}, 2), _big("t"))
    other, other_outcome = await pipeline.present(Call("s", "other", {}, 3), _big("t"))
    assert toon_outcome.action == "toon" and toon["content"][0]["text"].startswith("[400]{id,name,note}:")
    assert tight_outcome.action == "shrink" and all(len(b["text"]) <= 1000 for b in tight["content"])
    assert other_outcome.action == "shrink" and 1000 < max(len(b["text"]) for b in other["content"]) <= 3000
    assert "format" not in other["_meta"]["truncation"]  # shrunk, never toonified: no policy turned it on


async def test_a_mid_size_result_is_sized_by_value_unless_its_tools_policy_says_shrink_above_false() -> None:
    config = parse_config_text('[policies."s:whole"]\nshrink_above = false\n')
    settings = config.apply(Settings.make(recovery="memory", dedup=False))
    pipeline = new_pipeline(settings, build_services(settings))
    rows = [{"id": i, "name": f"row {i}", "note": "x" * 40} for i in range(150)]
    mid = {"content": [{"type": "text", "text": json.dumps(rows)}]}  # ~11 KB: under the 20,000 budget
    assert 6000 < _chars(mid) < settings.policy.budget
    valued, valued_outcome = await pipeline.present(Call("s", "other", {}, 1), mid)
    whole, whole_outcome = await pipeline.present(Call("s", "whole", {}, 2), mid)
    assert valued_outcome.action == "shrink" and _chars(valued) <= 4000
    assert all(f'"{name}"' in valued["content"][0]["text"] for name in ("id", "name", "note"))
    assert whole_outcome.action == "passthrough" and whole == mid
