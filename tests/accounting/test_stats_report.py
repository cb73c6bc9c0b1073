"""`mcpsqueeze stats FILE... [--json] [--html]` over stats files written by real sessions; the page in Chromium."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from memwrap import Completed, MemoryWrap, run_cli
from rawclient import ROOT

# Two sessions with different servers into ONE stats file: call numbers restart, session ids differ.
PLANS = {
    "issues": [
        ("search_issues", {"query": "login"}),
        ("echo", {"text": "hi"}),
        ("search_issues", {"query": "login"}),
        ("list_rows", {"table": "users"}),
        ("read_file", {"path": "README.md"}),
        ("list_rows", {"table": "users"}),
    ],
    "warehouse": [
        ("list_rows", {"table": "orders", "n": 800}),
        ("big_structured", {"n": 200}),
        ("list_rows", {"table": "orders", "n": 800}),
        ("add", {"a": 1, "b": 2}),
        ("search_issues", {"query": "db"}),
    ],
}


@pytest.fixture(scope="module")
def stats_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("stats")
    path = base / "stats.jsonl"
    for name, calls in PLANS.items():
        # Two wrap sessions of the demo server writing one stats file, run in this process (memwrap).
        args = ["--name", name, "--recovery-dir", str(base / "rec"), "--stats-file", str(path)]
        with MemoryWrap(args) as client:
            client.initialize()
            first = None
            for tool, arguments in calls:
                result = client.call(tool, arguments)
                first = first or (result.get("_meta") or {}).get("truncation", {}).get("response_id")
            client.call("squeeze_recover", {"response_id": first})
            assert client.close() == 0
    return path


def _stats(*args: str) -> Completed:
    done = run_cli("stats", *args)
    assert done.returncode == 0, done.stderr
    return done


def test_text_and_json_report_the_same_numbers_sessions_apart(stats_file: Path) -> None:
    data = json.loads(_stats(str(stats_file), "--json").stdout)
    text = _stats(str(stats_file)).stdout
    totals = data["totals"]
    assert totals["calls"] == sum(len(c) for c in PLANS.values())
    assert f"calls proxied    {totals['calls']}" in text
    assert f"tokens before    {totals['tokens_before']}" in text
    assert f"tokens after     {totals['tokens_after']}" in text
    assert f"  recovered        {totals['recovered']}\n" in text and totals["recovered"] == 2
    assert totals["shrunk"] >= 4 and totals["deduplicated"] == 3
    sessions = data["sessions"]
    assert [s["servers"] for s in sessions] == [["issues"], ["warehouse"]]
    assert [s["calls"] for s in sessions] == [len(PLANS["issues"]), len(PLANS["warehouse"])]
    for s in sessions:
        assert s["session"] in text
    assert sum(s["tokens_before"] for s in sessions) == totals["tokens_before"]
    assert sum(t["tokens_after"] for t in data["tools"]) == totals["tokens_after"]
    assert all(r["tool"] in ("search_issues", "list_rows") and r["call"] == 1 for r in data["recovered"])
    assert data["timeline"][-1]["tokens_before"] == totals["tokens_before"]
    assert {(d["session"], d["call"]) for d in data["dedup_hits"]} == {
        (sessions[0]["session"], 3),
        (sessions[0]["session"], 6),
        (sessions[1]["session"], 3),
    }


def test_each_line_names_its_session_and_each_recovery_has_a_line(stats_file: Path) -> None:
    rows = [json.loads(line) for line in stats_file.read_text().splitlines()]
    calls = [r for r in rows if r["action"] != "recover"]
    recoveries = [r for r in rows if r["action"] == "recover"]
    sessions = list(dict.fromkeys(r["session"] for r in calls))
    assert len(sessions) == 2 and all(re.fullmatch(r"[0-9a-f]{12}", s) for s in sessions)
    for session, plan in zip(sessions, PLANS.values(), strict=True):
        numbers = [r["call"] for r in calls if r["session"] == session]
        assert numbers == list(range(1, len(plan) + 1))  # numbers restart; the session id tells them apart
    shrunk_ids = {r["response_id"] for r in calls if r["action"] == "shrink"}
    assert len(recoveries) == 2 and {r["response_id"] for r in recoveries} <= shrunk_ids
    assert all(r["bytes"] > 2000 for r in recoveries)


def test_old_files_without_session_ids_split_where_call_numbers_restart(tmp_path: Path) -> None:
    old = tmp_path / "old.jsonl"
    rows = [
        {"tool": "a", "call": 1, "action": "shrink", "tokens_before": 900, "tokens_after": 90},
        {"tool": "a", "call": 2, "action": "dedup", "tokens_before": 900, "tokens_after": 9},
        {"tool": "b", "call": 1, "action": "passthrough", "tokens_before": 5, "tokens_after": 5},
    ]
    old.write_text("\n".join(json.dumps(r) for r in rows) + "\nnot json\n{}\n")
    data = json.loads(_stats(str(old), "--json").stdout)
    assert [(s["session"], s["calls"]) for s in data["sessions"]] == [("old.jsonl#1", 2), ("old.jsonl#2", 1)]
    assert data["skipped_lines"] == 2
    assert data["totals"]["tokens_saved"] == (900 - 90) + (900 - 9)


def test_several_files_make_one_report(stats_file: Path, tmp_path: Path) -> None:
    copy = tmp_path / "copy.jsonl"
    shutil.copy(stats_file, copy)
    one = json.loads(_stats(str(stats_file), "--json").stdout)
    both = json.loads(_stats(str(stats_file), str(copy), "--json").stdout)
    assert both["totals"]["calls"] == 2 * one["totals"]["calls"]
    assert both["files"] == [str(stats_file), str(copy)]


# -- the HTML page in real headless Chromium ---------------------------------------------------------------

CHROMIUM_FLAGS = (
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync", "--hide-scrollbars",
)  # fmt: skip


def _chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        message = "chromium is not installed (apt-get install -y chromium; .ci/run does it)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return found


def _browse(page: Path, tmp_path: Path, *mode: str) -> subprocess.CompletedProcess[str]:
    profile = tmp_path / f"profile-{len(list(tmp_path.glob('profile-*')))}"  # a fresh profile every run
    argv = [_chromium(), *CHROMIUM_FLAGS, f"--user-data-dir={profile}", "--enable-logging=stderr", "--v=0"]
    return subprocess.run([*argv, *mode, page.as_uri()], capture_output=True, text=True, timeout=90)


def _console(done: subprocess.CompletedProcess[str]) -> list[str]:
    return [line for line in done.stderr.splitlines() if ":CONSOLE" in line]


class _Attrs(HTMLParser):
    """Every element's data-* attributes, and the embedded JSON block, from the DOM Chromium rendered."""

    def __init__(self) -> None:
        super().__init__()
        self.elements: list[dict[str, str]] = []
        self.embedded = ""
        self._in_data = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = {k: v or "" for k, v in attrs if k.startswith("data-")}
        if found:
            self.elements.append({"tag": tag, **found})
        self._in_data = ("id", "mcpsqueeze-data") in attrs

    def handle_data(self, data: str) -> None:
        if self._in_data:
            self.embedded += data

    def handle_endtag(self, tag: str) -> None:
        self._in_data = False

    def where(self, **match: str) -> list[dict[str, str]]:
        return [e for e in self.elements if all(e.get(k) == v for k, v in match.items())]


def test_the_html_page_renders_in_chromium_without_console_errors_and_shows_the_json_numbers(
    stats_file: Path, tmp_path: Path
) -> None:
    page = tmp_path / "report.html"
    data = json.loads(_stats(str(stats_file), "--json", "--html", str(page)).stdout)
    assert page.stat().st_mode & 0o077 == 0
    assert not re.search(r"(src|href)=\"(https?:)?//", page.read_text())  # self-contained: nothing fetched
    shot = tmp_path / "report.png"
    rendered = _browse(page, tmp_path, f"--screenshot={shot}", "--window-size=1150,1650")
    dom = _browse(page, tmp_path, "--dump-dom")
    assert _console(rendered) == [] and _console(dom) == []
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 50_000
    if os.environ.get("MCPSQUEEZE_UPDATE_SCREENSHOT") == "1":
        shutil.copy(shot, ROOT / "docs" / "stats-report.png")

    parsed = _Attrs()
    parsed.feed(dom.stdout)
    assert json.loads(parsed.embedded) == data
    totals = data["totals"]
    for metric in ("tokens_before", "tokens_after", "tokens_saved", "calls", "shrunk", "recovered"):
        (card,) = parsed.where(**{"data-metric": metric})
        assert int(card["data-value"]) == totals[metric], metric
    (timeline,) = parsed.where(**{"data-chart": "timeline"})
    assert int(timeline["data-final-before"]) == totals["tokens_before"]
    assert int(timeline["data-final-after"]) == totals["tokens_after"]
    assert int(timeline["data-points"]) == totals["calls"]
    (before_line,) = parsed.where(**{"data-series": "before"})
    assert [int(v) for v in before_line["data-values"].split()] == [
        p["tokens_before"] for p in data["timeline"]
    ]
    for tool in data["tools"]:
        (bar,) = parsed.where(tag="g", **{"data-tool": tool["tool"]})
        assert (int(bar["data-tokens-before"]), int(bar["data-tokens-after"])) == (
            tool["tokens_before"],
            tool["tokens_after"],
        )
    for session in data["sessions"]:
        (row,) = parsed.where(
            tag="tr", **{"data-session": session["session"], "data-calls": str(session["calls"])}
        )
        assert int(row["data-tokens-before"]) == session["tokens_before"]
    assert len(parsed.where(tag="tr", **{"data-bytes": str(data["recovered"][0]["bytes"])})) == 1
    # the page really shows the numbers, not only carries them
    assert f"{totals['tokens_saved']:,}" in dom.stdout and f"{totals['percent_saved']}%" in dom.stdout


def test_the_console_check_sees_a_script_error(tmp_path: Path) -> None:
    page = tmp_path / "broken.html"
    page.write_text("<html><body><script>console.error('seen'); noSuchFunction();</script></body></html>")
    lines = _console(_browse(page, tmp_path, "--dump-dom"))
    assert any("seen" in line for line in lines) and any("noSuchFunction" in line for line in lines)


def test_names_from_backends_are_escaped_in_the_page(tmp_path: Path) -> None:
    stats = tmp_path / "s.jsonl"
    row: dict[str, Any] = {
        "tool": "<script>alert(1)</script>",
        "call": 1,
        "session": "s</script>",
        "action": "shrink",
    }
    stats.write_text(json.dumps({**row, "tokens_before": 10, "tokens_after": 1}) + "\n")
    page = tmp_path / "r.html"
    _stats(str(stats), "--html", str(page))
    text = page.read_text()
    assert "<script>alert" not in text and '</script>"' not in text
    assert text.count("</script>") == 1  # only the end of the embedded JSON block


def test_even_call_ticks_one_label_per_interleaved_session_and_labelled_bytes(
    stats_file: Path, tmp_path: Path
) -> None:
    stats = tmp_path / "interleaved.jsonl"
    rows = []
    for i in range(17):  # two sessions sharing one stats file, their calls alternating in time
        session = ("aaaaaaaaaaaa", "bbbbbbbbbbbb")[i % 2 if i >= 3 else 0]
        rows.append(
            {"time": 1000.0 + i, "session": session, "call": i // 2 + 1, "tool": "read_text_file",
             "action": "shrink", "tokens_before": 900, "tokens_after": 90, "response_id": f"{i:032x}"}
        )  # fmt: skip
    rows.append({"time": 2000.0, "action": "recover", "response_id": f"{0:032x}", "bytes": 309756})
    stats.write_text("".join(json.dumps(r) + "\n" for r in rows))
    page = tmp_path / "r.html"
    _stats(str(stats), "--html", str(page))
    dom = _browse(page, tmp_path, "--dump-dom")
    assert _console(dom) == []
    parsed = _Attrs()
    parsed.feed(dom.stdout)
    ticks = [int(t) for t in re.findall(r'class="axis" text-anchor="middle"[^>]*>(\d+)</text>', dom.stdout)]
    assert ticks == [0, 5, 10, 15]  # was 0, 4, 8, 13, 17
    labels = [e["data-session-label"] for e in parsed.elements if "data-session-label" in e]
    assert labels == ["aaaaaaaaaaaa", "bbbbbbbbbbbb"]  # each once, though the sessions interleave
    assert dom.stdout.count('class="split"') == 1
    (header,) = parsed.where(**{"data-bytes-counted": "stored-result"})
    assert (
        header["tag"] == "th" and "stored result, bytes" in dom.stdout and "original bytes" not in dom.stdout
    )
    assert "the whole stored result" in dom.stdout and "counts it twice" in dom.stdout
    # what is counted, on real sessions: the stored result's file, byte for byte
    data = json.loads(_stats(str(stats_file), "--json").stdout)
    for recovered in data["recovered"]:
        stored = stats_file.parent / "rec" / f"mcpsqueeze-{recovered['response_id']}.json"
        assert recovered["bytes"] == stored.stat().st_size


def test_the_report_says_which_calls_were_counted_as_a_clients_model_reads_them(tmp_path: Path) -> None:
    from mcpsqueeze.accounting._report import load_report, render_text

    path = tmp_path / "stats.jsonl"
    row = {
        "session": "s1",
        "server": "fs",
        "tool": "read",
        "action": "shrink",
        "tokens_before": 10,
        "tokens_after": 2,
    }
    path.write_text(
        "\n".join(
            json.dumps(
                {**row, "call": n, **({"client": "codex", "seen": "structuredContent"} if n < 3 else {})}
            )
            for n in (1, 2, 3)
        )
        + "\n"
    )
    text = render_text(load_report([path]))
    assert (
        "tokens counted   as each client's model reads them (codex: 2 calls; any other client: 1 call)"
        in text
    )
