"""The `stats --html` page: one self-contained file, inline SVG, no script, no network. It draws `report_data`
and carries it twice for checking: the JSON block `#mcpsqueeze-data` and `data-*` attributes on the
elements that show each number.
"""

from __future__ import annotations

import html
import json
import math
from collections.abc import Iterable
from importlib import resources
from typing import Any

from ._stats import clock, counted

__all__ = ["render_html"]

BEFORE = "#94a3b8"
AFTER = "#2563eb"
SAVED = "#16a34a"


def _e(value: Any) -> str:
    return html.escape(str(value), quote=True)


def _n(value: int | float) -> str:
    return f"{value:,}"


def _short(value: float) -> str:
    for unit, size in (("M", 1e6), ("k", 1e3)):
        if abs(value) >= size:
            text = f"{value / size:.1f}".rstrip("0").rstrip(".")
            return f"{text}{unit}"
    return f"{value:g}"


def _step(raw: float, whole: bool = False) -> float:
    """The round axis step of at least `raw`: 1, 2, 2.5 or 5 times a power of ten (a whole number when
    `whole`: 25 calls, never 2.5)."""
    magnitude: float = 10.0 ** math.floor(math.log10(raw))
    steps = (m * magnitude for m in (1, 2, 2.5, 5, 10))
    return next(s for s in steps if s >= raw and (not whole or (s >= 1 and s == int(s))))


def _ticks(top: float, count: int = 5) -> list[float]:
    """Round axis steps from 0 to at least `top`."""
    if top <= 0:
        return [0.0, 1.0]
    step = _step(top / count)
    return [i * step for i in range(math.ceil(top / step - 1e-9) + 1)]


def _call_ticks(calls: int, count: int = 5) -> list[int]:
    """Evenly spaced whole call numbers from 0 to at most `calls`: 0, 5, 10, 15 for 17 calls."""
    return list(range(0, calls + 1, int(_step(calls / count, whole=True)))) if calls > 0 else [0]


# -- charts ------------------------------------------------------------------------------------------------


def _timeline(data: dict[str, Any]) -> str:
    points = data["timeline"]
    width, height = 1040, 300
    left, right, top, bottom = 64, 16, 16, 40
    plot_w, plot_h = width - left - right, height - top - bottom
    final_before = points[-1]["tokens_before"] if points else 0
    final_after = points[-1]["tokens_after"] if points else 0
    ticks = _ticks(max(final_before, final_after, 1))
    y_max = ticks[-1]
    n = max(len(points), 1)

    def x(i: int) -> float:
        return left + plot_w * (i / n)

    def y(v: float) -> float:
        return top + plot_h * (1 - v / y_max)

    parts = [
        f'<svg class="chart" viewBox="0 0 {width} {height}" role="img" data-chart="timeline" '
        f'data-final-before="{final_before}" data-final-after="{final_after}" data-points="{len(points)}">',
        "<title>Cumulative tokens before and after, call by call</title>",
    ]
    for tick in ticks:
        parts.append(
            f'<line x1="{left}" x2="{width - right}" y1="{y(tick):.1f}" y2="{y(tick):.1f}" class="grid"/>'
            f'<text x="{left - 8}" y="{y(tick) + 4:.1f}" class="axis" text-anchor="end">{_short(tick)}</text>'
        )
    before_pts = [(x(0), y(0))] + [(x(i + 1), y(p["tokens_before"])) for i, p in enumerate(points)]
    after_pts = [(x(0), y(0))] + [(x(i + 1), y(p["tokens_after"])) for i, p in enumerate(points)]
    band = before_pts + list(reversed(after_pts))
    parts.append(
        f'<polygon points="{_pts(band)}" fill="{SAVED}" fill-opacity="0.12">'
        "<title>tokens saved</title></polygon>"
    )
    parts.append(
        f'<polygon points="{_pts([*after_pts, (x(len(points)), y(0))])}" fill="{AFTER}" fill-opacity="0.10"/>'
    )
    for name, pts, color in (("before", before_pts, BEFORE), ("after", after_pts, AFTER)):
        values = " ".join(str(p[f"tokens_{name}"]) for p in points)
        parts.append(
            f'<polyline points="{_pts(pts)}" fill="none" stroke="{color}" stroke-width="2.5" '
            f'stroke-linejoin="round" data-series="{name}" data-values="{values}"/>'
        )
    # where each session starts (once: sessions that share a stats file interleave in time order); a
    # label only where there is room for it (many short sessions would overlap)
    seen: set[str] = set()
    labelled_at = -1e9
    for i, p in enumerate(points):
        if p["session"] in seen:
            continue
        seen.add(p["session"])
        if i:
            parts.append(
                f'<line x1="{x(i):.1f}" x2="{x(i):.1f}" y1="{top}" y2="{top + plot_h}" class="split"/>'
            )
        if x(i) - labelled_at < 100:
            continue
        labelled_at = x(i)
        parts.append(
            f'<text x="{x(i) + 4:.1f}" y="{top + 12}" class="session-label" '
            f'data-session-label="{_e(p["session"])}">{_e(p["session"][:12])}'
            f"<title>session {_e(p['session'])} from {_e(clock(p['time']))}</title></text>"
        )
    for i, p in enumerate(points):  # hover targets: one per call
        parts.append(
            f'<circle cx="{x(i + 1):.1f}" cy="{y(p["tokens_after"]):.1f}" r="3" fill="{AFTER}" class="dot">'
            f"<title>#{p['call']} {_e(p['tool'])} at {_e(clock(p['time'], False))}: cumulative "
            f"{_n(p['tokens_before'])} → {_n(p['tokens_after'])} tokens</title></circle>"
        )
    for t in _call_ticks(len(points)):
        parts.append(
            f'<text x="{x(t):.1f}" y="{height - bottom + 18}" class="axis" text-anchor="middle" '
            f'data-x-tick="{t}">{t}</text>'
        )
    parts.append(
        f'<text x="{left + plot_w / 2:.1f}" y="{height - 4}" class="axis" text-anchor="middle">'
        "calls, in time order</text>"
    )
    parts.append(
        f'<line x1="{left}" x2="{width - right}" y1="{top + plot_h}" y2="{top + plot_h}" class="baseline"/>'
    )
    parts.append("</svg>")
    return "".join(parts)


def _pts(points: list[tuple[float, float]]) -> str:
    return " ".join(f"{a:.1f},{b:.1f}" for a, b in points)


def _tools(data: dict[str, Any], limit: int = 15) -> str:
    tools = data["tools"][:limit]
    row_h, label_w, width = 34, 220, 1040
    bar_w = width - label_w - 230
    height = max(row_h * len(tools) + 8, 40)
    peak = max([t["tokens_before"] for t in tools] + [t["tokens_after"] for t in tools] + [1])
    parts = [f'<svg class="chart" viewBox="0 0 {width} {height}" role="img" data-chart="tools">']
    parts.append("<title>Tokens before and after, per tool</title>")
    for i, t in enumerate(tools):
        y0 = 4 + i * row_h
        wb = bar_w * t["tokens_before"] / peak
        wa = bar_w * t["tokens_after"] / peak
        parts.append(
            f'<g data-tool="{_e(t["tool"])}" data-tokens-before="{t["tokens_before"]}" '
            f'data-tokens-after="{t["tokens_after"]}" data-calls="{t["calls"]}">'
            f"<title>{_e(t['tool'])}: {counted(t['calls'], 'call')}, {t['shrunk']} shrunk, "
            f"{t['deduplicated']} deduplicated</title>"
            f'<text x="{label_w - 10}" y="{y0 + 19}" class="label" text-anchor="end">'
            f"{_e(t['tool'][:30])}</text>"
            f'<rect x="{label_w}" y="{y0 + 3}" width="{max(wb, 1):.1f}" height="22" rx="4" fill="{BEFORE}" '
            f'fill-opacity="0.45"/>'
            f'<rect x="{label_w}" y="{y0 + 8}" width="{max(wa, 1):.1f}" height="12" rx="3" fill="{AFTER}"/>'
            f'<text x="{label_w + max(wb, wa) + 10:.1f}" y="{y0 + 19}" class="value">'
            f"{_n(t['tokens_before'])} → {_n(t['tokens_after'])}"
            f"{_saved_span(t['percent_saved'])}</text>"
            "</g>"
        )
    parts.append("</svg>")
    more = len(data["tools"]) - len(tools)
    note = f'<p class="note">and {more} more tool(s) in the JSON (stats --json)</p>' if more > 0 else ""
    return "".join(parts) + note


def _saved_span(percent: float) -> str:
    if percent > 0:
        return f'<tspan class="saved"> −{percent}%</tspan>'
    return '<tspan class="unchanged"> unchanged</tspan>' if percent == 0 else f"<tspan> +{-percent}%</tspan>"


# -- tables ------------------------------------------------------------------------------------------------


def _bar(before: int, after: int, peak: int) -> str:
    wb = 100 * before / peak if peak else 0
    wa = 100 * after / peak if peak else 0
    return (
        f'<svg class="mini" viewBox="0 0 100 10" preserveAspectRatio="none">'
        f'<rect width="{wb:.2f}" height="10" fill="{BEFORE}" fill-opacity="0.45"/>'
        f'<rect y="2.5" width="{wa:.2f}" height="5" fill="{AFTER}"/></svg>'
    )


def _table(name: str, head: str, rows: Iterable[str]) -> str:
    body = "".join(rows)
    return f'<table data-table="{name}"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


def _sessions(data: dict[str, Any]) -> str:
    head = '<th>session</th><th>servers</th><th>started</th><th>last call</th><th class="num">calls</th>'
    head += '<th class="num">tokens before</th><th class="num">after</th><th class="num">saved</th>'
    rows = (
        f'<tr data-session="{_e(s["session"])}" data-tokens-before="{s["tokens_before"]}" '
        f'data-tokens-after="{s["tokens_after"]}" data-calls="{s["calls"]}">'
        f'<td class="mono">{_e(s["session"])}</td><td>{_e(", ".join(s["servers"]) or "-")}</td>'
        f"<td>{_e(clock(s['started']))}</td><td>{_e(clock(s['ended'], False))}</td>"
        f'<td class="num">{s["calls"]}</td><td class="num">{_n(s["tokens_before"])}</td>'
        f'<td class="num">{_n(s["tokens_after"])}</td>'
        f'<td class="num saved">{s["percent_saved"]}%</td></tr>'
        for s in data["sessions"]
    )
    return _table("sessions", head, rows)


def _call_row(r: dict[str, Any]) -> str:
    """A call's row opening, and its number and tool cells."""
    return (
        f'<tr data-call="{r["call"]}" data-session="{_e(r["session"])}" '
        f'data-tokens-before="{r["tokens_before"]}" data-tokens-after="{r["tokens_after"]}">'
        f'<td class="num">#{r["call"]}</td><td>{_e(r["tool"])}</td>'
    )


def _calls(calls: list[dict[str, Any]], name: str) -> str:
    peak = max([r["tokens_before"] for r in calls] + [1])
    head = '<th class="num">call</th><th>tool</th><th>action</th><th class="num">before</th>'
    head += '<th class="num">after</th><th></th><th>session</th>'
    rows = (
        f'{_call_row(r)}<td><span class="tag {_e(r["action"])}">{_e(r["action"])}</span></td>'
        f'<td class="num">{_n(r["tokens_before"])}</td><td class="num">{_n(r["tokens_after"])}</td>'
        f'<td class="barcell">{_bar(r["tokens_before"], r["tokens_after"], peak)}</td>'
        f'<td class="mono dim">{_e(r["session"])}</td></tr>'
        for r in calls
    )
    return _table(name, head, rows)


def _recovered(data: dict[str, Any]) -> str:
    if not data["recovered"]:
        return '<p class="note">No original was read back in these sessions.</p>'
    head = '<th>when</th><th>result of</th><th class="num" data-bytes-counted="stored-result">'
    head += "stored result, bytes</th><th>response</th>"
    rows = (
        f'<tr data-response-id="{_e(r["response_id"])}" data-bytes="{r["bytes"]}">'
        f"<td>{_e(clock(r['time'], False))}</td>"
        f"<td>{_e(_origin(r))}</td>"
        f'<td class="num">{_n(r["bytes"])}</td>'
        f'<td class="mono dim" title="{_e(r["response_id"])}">{_e(r["response_id"][:10])}…</td></tr>'
        for r in data["recovered"]
    )
    note = (
        '<p class="note" data-note="bytes">Bytes of the whole stored result, as it was read back: the '
        "CallToolResult as JSON, with its text blocks, <code>structuredContent</code> and "
        "<code>_meta</code>, escaped. Not the size of the file or data the tool read: a result that "
        "repeats its text as <code>structuredContent</code> counts it twice.</p>"
    )
    return _table("recovered", head, rows) + note


def _origin(recovery: dict[str, Any]) -> str:
    """The call whose original was read back, when it is in the files."""
    return f"#{recovery['call']} {recovery['tool']}" if recovery["tool"] else "(not in these files)"


def _dedup(data: dict[str, Any]) -> str:
    if not data["dedup_hits"]:
        return '<p class="note">No repeated result in these sessions.</p>'
    head = '<th class="num">call</th><th>tool</th><th class="num">tokens saved</th><th>session</th>'
    rows = (
        f'{_call_row(r)}<td class="num">{_n(r["tokens_before"] - r["tokens_after"])}</td>'
        f'<td class="mono dim">{_e(r["session"][:12])}</td></tr>'
        for r in data["dedup_hits"]
    )
    return _table("dedup", head, rows)


# -- page --------------------------------------------------------------------------------------------------


def _card(totals: dict[str, Any], label: str, metric: str, sub: str, shown: str = "", cls: str = "") -> str:
    value = totals[metric]
    return (
        f'<div class="card {cls}" data-metric="{metric}" data-value="{value}">'
        f'<div class="card-label">{label}</div><div class="card-value">{shown or _n(value)}</div>'
        f'<div class="card-sub">{sub}</div></div>'
    )


def render_html(data: dict[str, Any]) -> str:
    t = data["totals"]
    times = [p["time"] for p in data["timeline"] if p["time"]]
    period = f"{clock(min(times))} – {clock(max(times))}" if times else "no calls"
    files = ", ".join(f.rsplit("/", 1)[-1] for f in data["files"])
    kept = f"{t['store_failures']} not stored" if t["store_failures"] else "all originals kept"
    cards = "".join(
        [
            _card(t, "Tokens before", "tokens_before", "as the servers sent"),
            _card(t, "Tokens after", "tokens_after", "as the agent read"),
            _card(t, "Saved", "tokens_saved", f"{t['percent_saved']}%", cls="good"),
            _card(t, "Calls", "calls", counted(len(data["sessions"]), "session")),
            _card(t, "Shrunk · dedup", "shrunk", kept, f"{t['shrunk']} · {t['deduplicated']}"),
            _card(t, "Recovered", "recovered", "originals read back"),
        ]
    )
    legend = (
        f'<div class="legend"><span><i style="background:{BEFORE}"></i>before</span>'
        f'<span><i style="background:{AFTER}"></i>after</span>'
        f'<span><i style="background:{SAVED};opacity:.35"></i>saved</span></div>'
    )
    embedded = json.dumps(data, ensure_ascii=False).replace("<", "\\u003c")
    skipped = f" · skipped {data['skipped_lines']} malformed line(s)" if data["skipped_lines"] else ""
    css = resources.files(__package__).joinpath("_stats_html.css").read_text(encoding="utf-8")
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy"
 content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">
<title>mcpsqueeze savings</title><style>{css}</style></head>
<body><main>
<h1>mcpsqueeze savings</h1>
<p class="sub">{_e(period)} · {_e(files)}{_e(skipped)}</p>
<div class="cards">{cards}</div>
<section><h2>Tokens over time (cumulative)</h2>{legend}{_timeline(data)}</section>
<section><h2>Per tool</h2>{legend}{_tools(data)}</section>
<section><h2>Sessions</h2>{_sessions(data)}</section>
<section><h2>Biggest results</h2>{_calls(data["biggest"], "biggest")}</section>
<div class="two">
<section><h2>Deduplicated ({len(data["dedup_hits"])})</h2>{_dedup(data)}</section>
<section><h2>Recovered ({len(data["recovered"])})</h2>{_recovered(data)}</section>
</div>
<footer>Tokens are counted with o200k_base (offline); other models' tokenizers give other counts.
Written by <code>mcpsqueeze stats --html</code>; the same numbers as
<code>mcpsqueeze stats --json</code>.</footer>
</main>
<script type="application/json" id="mcpsqueeze-data">{embedded}</script>
</body></html>
"""
