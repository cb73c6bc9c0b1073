"""`mcpsqueeze demo`: a scripted agent session through the real proxy against the bundled demo server.

It spawns `mcpsqueeze wrap -- python -m mcpsqueeze.demo.server` exactly as an agent's MCP client would,
makes a handful of realistic calls, and prints what the proxy did to each; then what the agent's model
read for one shrunk result and the one recovery call that brings a folded part of it back; then what
the proxy saved (its own summary follows on stderr). The session's stats file, its originals and an
HTML report stay in a directory the demo keeps (`<user cache>/mcpsqueeze/demo`); its last line names
the report and how to open it.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from .._paths import cache_home
from .._results import text_of
from ._transcript import Step, render_steps, shown_lines

__all__ = ["run_demo"]

SHOWN_CALL = 2  # the call whose preview the demo prints: a text outline, with folds to open
PREVIEW_LINES = 60  # all of it: the budget is 4,000 characters
RECOVERY_LINES = 12
# The exact recover call a text preview's first line offers for its first fold.
OFFERED = re.compile(r"squeeze_recover (\{[^}]*\})")

SCRIPT: list[tuple[str, dict[str, Any], str]] = [
    ("search_issues", {"query": "login bug"}, "a 240 KB JSON search result"),
    ("read_file", {"path": "docs/architecture.md"}, "60 KB of prose"),
    ("list_rows", {"table": "events", "n": 500}, "a 500-row JSON array"),
    ("search_issues", {"query": "login bug"}, "the same search again"),
    ("read_file", {"path": "docs/architecture.md"}, "the same file again"),
    ("echo", {"text": "hello"}, "a small result"),
]


def _action(meta: dict[str, Any]) -> str:
    """What the proxy did to one result, as the summary counts it: a dedup pointer carries
    `_meta.truncation` too (its recovery), so `mcpsqueeze/dedup` is asked first."""
    dedup = meta.get("mcpsqueeze/dedup")
    if isinstance(dedup, dict):
        if "same_as_call" in dedup:
            return f"deduplicated (same as call #{dedup['same_as_call']})"
        return f"deduplicated (what changed since call #{dedup.get('overlaps_call')})"
    if "truncation" in meta:
        return f"shrunk, id {meta['truncation']['response_id']}"
    return "passed through"


@contextlib.contextmanager
def _exit_grace(seconds: float) -> Iterator[None]:
    """Give wrap `seconds` to exit after stdin closes before the SDK's client kills it (2 s by default):
    it counts the session's last tokens and prints its summary then, which takes longer on a busy machine
    (the stats file read below would otherwise miss the calls still being counted)."""
    from mcp.client import stdio

    before = stdio.PROCESS_TERMINATION_TIMEOUT
    stdio.PROCESS_TERMINATION_TIMEOUT = max(before, seconds)
    try:
        yield
    finally:
        stdio.PROCESS_TERMINATION_TIMEOUT = before


async def run_demo(budget: int, no_shrink: bool, html: Path | None) -> int:
    import mcp_types as types
    from mcp import Client, StdioServerParameters
    from pydantic import TypeAdapter

    from ..accounting import load_report, render_text, write_html

    kept = Path(cache_home()) / "mcpsqueeze" / "demo"
    kept.mkdir(mode=0o700, parents=True, exist_ok=True)
    stats = kept / "stats.jsonl"
    stats.unlink(missing_ok=True)  # one run's session, not every run's
    report_path = (html if html is not None else kept / "report.html").absolute()
    raw: Any = TypeAdapter(dict[str, Any])  # the raw wire dict, as the agent's client receives it
    args = ["-m", "mcpsqueeze.cli", "wrap", "--budget", str(budget), "--stats-file", str(stats)]
    args += ["--recovery-dir", str(kept / "recovery")]
    if no_shrink:
        args.append("--no-shrink")
    args += ["--", sys.executable, "-m", "mcpsqueeze.demo.server"]
    server = StdioServerParameters(command=sys.executable, args=args, env=dict(os.environ))
    print(f"mcpsqueeze demo: wrapping the bundled demo server (budget {budget} characters)\n")
    with _exit_grace(60.0):
        shown, asked, recovered = await _session(Client(server, mode="legacy"), raw, types)
    report = load_report([stats], top=3) if stats.exists() else None
    if recovered:
        print(f"\nWhat the agent's model read for call #{SHOWN_CALL}, then one call that brings a fold back:")
        print(_transcript(shown, asked, recovered, report))
    if report is not None:
        print()
        print(render_text(report), flush=True)
        write_html(report, report_path)
        print(f"\nThe session's stats: mcpsqueeze stats {stats}")
        print(f"Open the report in a browser: {report_path.as_uri()}", flush=True)
    return 0


def _transcript(result: dict[str, Any], asked: dict[str, Any], recovered: dict[str, Any], report: Any) -> str:
    tool, arguments, _what = SCRIPT[SHOWN_CALL - 1]
    original = result["_meta"]["truncation"]["report"]["original_chars"]
    shown = text_of(result)
    note = f"{original:,} characters from the server; the model reads {len(shown):,}"
    rows = [r for r in (report.calls if report is not None else []) if r.call == SHOWN_CALL]
    if rows:
        note += f" ({rows[0].tokens_before:,} -> {rows[0].tokens_after:,} tokens)"
    back = text_of(recovered)
    lines = len(shown_lines(back))
    return render_steps(
        [
            Step(tool, arguments, note, shown, PREVIEW_LINES),
            Step("squeeze_recover", asked, f"{lines} lines", back, RECOVERY_LINES),
        ]
    )


async def _session(
    opened: Any, raw: Any, types: Any
) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    """The scripted calls and the one recovery, printed as the agent's client receives them; the shown
    call's result, the arguments of the recover call its preview offers, and what that call brought back."""
    shown: dict[str, Any] = {}

    async def call(tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        params = types.CallToolRequestParams(name=tool, arguments=arguments)
        result: dict[str, Any] = await client.session.send_request(types.CallToolRequest(params=params), raw)
        return result

    async with opened as client:
        tools = await client.list_tools()
        print(f"tools/list: {len(tools.tools)} tools, including {tools.tools[-1].name}\n")
        print(f"{'call':<5} {'tool':<14} {'what':<30} {'shown':>8}  action")
        for number, (tool, arguments, what) in enumerate(SCRIPT, 1):
            result = await call(tool, arguments)
            action = _action(result.get("_meta") or {})
            if number == SHOWN_CALL and action.startswith("shrunk"):
                shown = result
            print(f"#{number:<4} {tool:<14} {what:<30} {len(text_of(result)):>8}  {action}")
        offered = OFFERED.search(text_of(shown)) if shown else None
        if offered is None:
            return shown, {}, {}
        asked = json.loads(offered.group(1))
        return shown, asked, await call("squeeze_recover", asked)
