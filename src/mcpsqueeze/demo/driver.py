"""`mcpsqueeze demo`: a scripted agent session through the real proxy against the bundled demo server.

It spawns `mcpsqueeze wrap -- python -m mcpsqueeze.demo.server` exactly as an agent's MCP client would,
makes a handful of realistic calls, recovers one part of a shrunk original, and prints what the agent saw
and what the proxy saved (the proxy's own summary follows on stderr).
"""

from __future__ import annotations

import contextlib
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from .._results import text_of

__all__ = ["run_demo"]

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


async def run_demo(budget: int, no_shrink: bool) -> int:
    import mcp_types as types
    from mcp import Client, StdioServerParameters
    from pydantic import TypeAdapter

    raw: Any = TypeAdapter(dict[str, Any])  # the raw wire dict, as the agent's client receives it
    with tempfile.TemporaryDirectory(prefix="mcpsqueeze-demo-") as tmp:
        stats = Path(tmp) / "stats.jsonl"
        args = ["-m", "mcpsqueeze.cli", "wrap", "--budget", str(budget), "--stats-file", str(stats)]
        args += ["--recovery-dir", str(Path(tmp) / "recovery")]
        if no_shrink:
            args.append("--no-shrink")
        args += ["--", sys.executable, "-m", "mcpsqueeze.demo.server"]
        server = StdioServerParameters(command=sys.executable, args=args)
        print(f"mcpsqueeze demo: wrapping the bundled demo server (budget {budget} characters)\n")
        with _exit_grace(60.0):
            await _session(Client(server, mode="legacy"), raw, types)
        print()
        from ..accounting import summarise_stats_file

        if stats.exists():
            print(summarise_stats_file(stats, top=3), flush=True)
    return 0


async def _session(opened: Any, raw: Any, types: Any) -> None:
    """The scripted calls and the one recovery, printed as the agent's client receives them."""
    async with opened as client:
        tools = await client.list_tools()
        print(f"tools/list: {len(tools.tools)} tools, including {tools.tools[-1].name}\n")
        first_id: str | None = None
        print(f"{'call':<5} {'tool':<14} {'what':<30} {'shown':>8}  action")
        for number, (tool, arguments, what) in enumerate(SCRIPT, 1):
            params = types.CallToolRequestParams(name=tool, arguments=arguments)
            request = types.CallToolRequest(params=params)
            result = await client.session.send_request(request, raw)
            action = _action(result.get("_meta") or {})
            if action.startswith("shrunk"):
                first_id = first_id or result["_meta"]["truncation"]["response_id"]
            print(f"#{number:<4} {tool:<14} {what:<30} {len(text_of(result)):>8}  {action}")
        if first_id:
            request = types.CallToolRequest(
                params=types.CallToolRequestParams(
                    name="squeeze_recover",
                    arguments={"response_id": first_id, "pointer": "/issues/17/title"},
                )
            )
            result = await client.session.send_request(request, raw)
            print(f"\nsqueeze_recover {first_id} /issues/17/title -> {text_of(result)!r}", flush=True)
