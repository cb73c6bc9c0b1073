"""`mcpsqueeze stats FILE...`: stats files read into one `StatsReport`, rendered as text, JSON or HTML from
the same figures. Sessions are told apart by each line's `session` (older files: where the call number
restarts).
"""

from __future__ import annotations

import dataclasses
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ._stats import Totals, clock, counted, render_summary

__all__ = [
    "StatsReport",
    "load_report",
    "render_json",
    "render_text",
    "report_data",
    "write_html",
]


@dataclass
class CallRow:
    """One call line of a stats file, normalised."""

    time: float
    session: str
    call: int
    server: str
    tool: str
    action: str
    tokens_before: int
    tokens_after: int
    response_id: str | None
    store_failed: bool
    client: str | None = None  # the profile whose model's view was counted (None: the text blocks)
    uncounted: bool = False  # its tokens could not be counted (its token figures are 0 here)


@dataclass
class Recovery:
    time: float
    response_id: str
    bytes: int  # size of the stored original (the CallToolResult as JSON)
    session: str | None = None  # of the call whose original was read back, when it is in the files
    call: int | None = None
    tool: str | None = None


@dataclass
class SessionRow:
    session: str
    servers: list[str]
    started: float
    ended: float
    totals: Totals = field(default_factory=Totals)


@dataclass
class StatsReport:
    files: list[str]
    totals: Totals
    tools: dict[str, Totals]
    sessions: list[SessionRow]
    calls: list[CallRow]  # in time order
    recoveries: list[Recovery]
    top: int
    skipped: int = 0

    @property
    def biggest(self) -> list[CallRow]:
        return sorted(self.calls, key=lambda r: -r.tokens_before)[: self.top]


def _call_row(row: dict[str, Any], session: str) -> CallRow:
    return CallRow(
        time=float(row.get("time") or 0.0),
        session=session,
        call=int(row.get("call") or 0),
        server=str(row.get("server") or ""),
        tool=str(row["tool"]),
        action=str(row["action"]),
        tokens_before=int(row["tokens_before"] or 0) if "uncounted" in row else int(row["tokens_before"]),
        tokens_after=int(row["tokens_after"] or 0) if "uncounted" in row else int(row["tokens_after"]),
        response_id=str(row["response_id"]) if row.get("response_id") else None,
        store_failed=bool(row.get("store_failed")),
        client=str(row["client"]) if row.get("client") else None,
        uncounted="uncounted" in row,
    )


def _read(path: Path, calls: list[CallRow], recoveries: list[Recovery]) -> int:
    """Append the lines of one file; return how many were malformed (skipped, never fatal)."""
    bad = 0
    legacy, last_call = 0, None
    with path.open(encoding="utf-8", errors="replace") as fh:
        for line in fh:
            if not line.strip():
                continue
            try:
                row = json.loads(line)
                if row["action"] == "recover":
                    recoveries.append(
                        Recovery(
                            float(row.get("time") or 0), str(row["response_id"]), int(row.get("bytes") or 0)
                        )
                    )
                    continue
                session = row.get("session")
                if not session:  # written before lines carried a session id
                    number = int(row.get("call") or 0)
                    if last_call is None or number <= last_call:
                        legacy += 1
                    last_call = number
                    session = f"{path.name}#{legacy}"
                calls.append(_call_row(row, str(session)))
            except (ValueError, KeyError, TypeError, AttributeError):
                bad += 1
    return bad


def load_report(paths: list[Path], top: int = 5) -> StatsReport:
    """Read every file (OSError propagates: the CLI turns it into a usage error)."""
    calls: list[CallRow] = []
    recoveries: list[Recovery] = []
    bad = sum(_read(path, calls, recoveries) for path in paths)
    calls.sort(key=lambda r: r.time)  # stable: lines of one session keep their order
    recoveries.sort(key=lambda r: r.time)
    totals = Totals()
    tools: dict[str, Totals] = {}
    sessions: dict[str, SessionRow] = {}
    origin: dict[str, CallRow] = {}
    for row in calls:
        s = sessions.setdefault(row.session, SessionRow(row.session, [], row.time, row.time))
        counts: tuple[int | None, int | None] = (
            (None, None) if row.uncounted else (row.tokens_before, row.tokens_after)
        )
        for into in (totals, tools.setdefault(row.tool, Totals()), s.totals):
            into.add(row.action, *counts, row.store_failed, row.client)
        s.ended = max(s.ended, row.time)
        if row.server and row.server not in s.servers:
            s.servers.append(row.server)
        if row.response_id and row.action in ("shrink", "dedup"):
            origin.setdefault(row.response_id, row)
    totals.recovered = len(recoveries)
    for recovery in recoveries:
        found = origin.get(recovery.response_id)
        if found is not None:
            recovery.session, recovery.call, recovery.tool = found.session, found.call, found.tool
    ordered_tools = dict(sorted(tools.items(), key=lambda kv: (-kv[1].saved, kv[0])))
    return StatsReport(
        [str(p) for p in paths],
        totals,
        ordered_tools,
        sorted(sessions.values(), key=lambda s: s.started),
        calls,
        recoveries,
        top,
        bad,
    )


# -- text --------------------------------------------------------------------------------------------------


def render_text(report: StatsReport) -> str:
    title = ", ".join(report.files) if len(report.files) <= 3 else f"{len(report.files)} files"
    out = [render_summary(report.totals, f"{title}: {counted(report.totals.calls, 'call')}")]
    if report.tools:
        out.append("")
        header = ("tool", "calls", "dedup", "shrunk", "before", "after", "saved")
        out.append("  {:<28} {:>6} {:>6} {:>6} {:>10} {:>10} {:>7}".format(*header))
        for tool, t in report.tools.items():
            out.append(
                f"  {_cell(tool, 28):<28} {t.calls:>6} {t.deduplicated:>6} {t.shrunk:>6} "
                f"{t.tokens_before:>10} {t.tokens_after:>10} {t.percent:>6.1f}%"
            )
    if report.sessions:
        out.append("")
        out.append(f"  sessions ({len(report.sessions)}):")
        for s in report.sessions:
            t = s.totals
            out.append(
                f"  {_cell(s.session, 24):<24} {clock(s.started)}  {counted(t.calls, 'call', 5):<11} "
                f"{t.tokens_before:>10} -> {t.tokens_after:<10} {t.percent:>5.1f}% saved  "
                f"{_cell(','.join(s.servers), 30)}"
            )
    if report.calls:
        out.append("")
        out.append("  biggest results (tokens before -> after):")
        for row in report.biggest:
            out.append(
                f"  #{row.call:<5} {_cell(row.tool, 28):<28} {row.tokens_before:>10} -> "
                f"{row.tokens_after:<10} {_cell(row.action, 12)}  session {_cell(row.session, 24)}"
            )
    if report.skipped:
        out.append(f"\n  skipped {report.skipped} malformed line(s)")
    return "\n".join(out)


def _cell(text: str, width: int) -> str:
    """A name as one cell of a row: control characters (a newline, a terminal escape) shown escaped,
    so a tool name cannot split a row or rewrite the terminal; cut to `width`."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)[:width]


# -- JSON --------------------------------------------------------------------------------------------------


def _totals(t: Totals) -> dict[str, Any]:
    return {
        **dataclasses.asdict(t),
        "tokens_saved": t.saved,
        "percent_saved": round(t.percent, 1),
    }


_CALL_KEYS = ("session", "call", "server", "tool", "action", "tokens_before", "tokens_after", "response_id")


def _call(row: CallRow) -> dict[str, Any]:
    return {key: getattr(row, key) for key in _CALL_KEYS}


def report_data(report: StatsReport) -> dict[str, Any]:
    """The report as plain data: `stats --json` prints it, the HTML page embeds and draws it."""
    cum_before = cum_after = 0
    timeline = []
    for row in report.calls:
        cum_before += row.tokens_before
        cum_after += row.tokens_after
        timeline.append(
            {
                "time": row.time,
                "session": row.session,
                "call": row.call,
                "tool": row.tool,
                "tokens_before": cum_before,
                "tokens_after": cum_after,
            }
        )
    return {
        "files": report.files,
        "totals": _totals(report.totals),
        "tools": [{"tool": tool, **_totals(t)} for tool, t in report.tools.items()],
        "sessions": [
            {
                "session": s.session,
                "servers": s.servers,
                "started": s.started,
                "ended": s.ended,
                **_totals(s.totals),
            }
            for s in report.sessions
        ],
        "biggest": [_call(row) for row in report.biggest],
        "dedup_hits": [_call(row) for row in report.calls if row.action == "dedup"],
        "recovered": [dataclasses.asdict(r) for r in report.recoveries],
        "timeline": timeline,
        "skipped_lines": report.skipped,
    }


def render_json(report: StatsReport) -> str:
    return json.dumps(report_data(report), indent=2, ensure_ascii=False)


# -- HTML --------------------------------------------------------------------------------------------------


def write_html(report: StatsReport, path: Path) -> None:
    """Write the self-contained page (0600: it names the tools and servers of private sessions)."""
    from ._stats_html import render_html

    page = render_html(report_data(report)).encode("utf-8")
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    with os.fdopen(fd, "wb") as fh:
        fh.write(page)
