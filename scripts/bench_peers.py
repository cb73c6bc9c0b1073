"""The peer benchmark of issue 10: one replayed coding session, direct and through three proxies.

Replays the 39-call session of ``scripts/bench_session.py`` (its ``session()``, ``servers()``,
``Peer`` and repository copy, imported, not copied) once per configuration, in one run, against the
real public servers (npm ``server-filesystem`` and ``server-memory``, PyPI ``mcp-server-git``):

- ``direct``;
- ``mcp-compressor --shrinkfit=20000`` (0.38.2, its default budget), in ``.cache/mcpc``;
- ``tooltrim mcp`` (0.3.3) at its default ``--max-tokens 512`` and at ``--max-tokens 5000`` (its
  tokens are characters / 4, so 5000 is the size comparable to our 20,000-character budget), in
  ``.cache/tooltrim``; it starts the backend with a minimal environment, so the memory server's
  ``MEMORY_FILE_PATH`` goes through an ``env VAR=... CMD`` prefix;
- ``mcpsqueeze wrap`` with its default settings (only the recovery directory and stats file are
  placed in the run's temp dir).

Printed per configuration: o200k tokens of the text blocks the model receives
(``mcpsqueeze.tokens``); how many results it changed (any difference from the direct text;
for ours split into shrunk / deduplicated / overlap from ``_meta``); how many of those its own
recovery returned BYTE FOR BYTE equal to the direct result of the same call (ours:
``squeeze_recover`` with the response id of ``_meta.truncation``; mcp-compressor: the same
``<server>_invoke_tool`` call with ``full: true``, its documented recovery, asked after the session
(a result evicted from its 32-entry cache runs the backend again); tooltrim offers no recover tool,
so 0); LANDMARK COVERAGE over the changed text results; and the share of JSON field names of the
changed JSON results visible in the preview. Then the issue's targets, met or not.

Landmarks are found by ``landmarks_of`` below, independently of the engine's own format detection:
it knows what each call returned (a ``.py``/``.md``/``.toml`` file by its path, a diff from
``git_diff``/``git_show``, a log from ``git_log``) and applies a few plain regexes (definition
lines, ``diff --git`` and ``@@`` headers, ``Commit:`` and ``Message:`` lines, section headers and
``name``/``version`` lines, Markdown headings outside code fences, and the test names of test files:
JS/TS ``describe(``/``it(``/``test(`` lines, Python ``def test_*``/``class Test*``, Rust ``#[test]``
functions, Go ``func Test*``). A landmark is visible when it
is a whole line, verbatim, of the preview, or of an earlier result of the session in the same
configuration (what a deduplicated or overlap result points to is in the agent's context; the same
rule holds for every configuration). Coverage "in preview" counts the preview alone. The targets
line also counts the engine's own ``mcpsqueeze.shrink.landmarks`` (what bench_previews.py uses) as a
cross-check; the two counts agreeing says the engine detected every result's kind.

    python scripts/bench_peers.py [--rev COMMIT] [--json OUT] [--only NAME,...] [--verbose] [--dump DIR]

mcp-compressor: ``python3 -m venv .cache/mcpc && .cache/mcpc/bin/pip install mcp-compressor==0.38.2``;
tooltrim: ``python3 -m venv .cache/tooltrim && .cache/tooltrim/bin/pip install 'tooltrim[mcp]==0.3.3'``.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import bench_session as bs  # the session, servers, Peer and repository copy
from bench_session import CallRecord, Configuration, Peer, Server, presented_text
from mcpsqueeze.shrink import landmarks  # only for the cross-check column

TOOLTRIM = bs.CACHE / "tooltrim" / "bin" / "tooltrim"
BUDGET = 20000  # mcp-compressor's default --shrinkfit, and ours (DESIGN)

# -- configurations ------------------------------------------------------------------------------------------


def _tooltrim(max_tokens: int | None) -> Callable[[Server, Path], list[str]]:
    def wrap(server: Server, _workdir: Path) -> list[str]:
        limit = [] if max_tokens is None else ["--max-tokens", str(max_tokens)]
        env = ["env", *(f"{k}={v}" for k, v in server.env.items())] if server.env else []
        return [str(TOOLTRIM), "mcp", *limit, "--", *env, *server.argv]

    return wrap


def _ours(server: Server, workdir: Path) -> list[str]:
    return [
        sys.executable, "-m", "mcpsqueeze.cli", "wrap", "--name", server.name,
        "--recovery-dir", str(workdir / "recovery"),
        "--stats-file", str(workdir / f"stats-{server.name}.jsonl"), "--", *server.argv,
    ]  # fmt: skip


DIRECT = "direct"
COMPRESSOR = "mcp-compressor --shrinkfit (20000)"
TOOLTRIM_DEFAULT = "tooltrim mcp (--max-tokens 512)"
TOOLTRIM_5000 = "tooltrim mcp --max-tokens 5000"
OURS = "mcpsqueeze wrap (defaults)"


def configurations() -> list[Configuration]:
    return [
        Configuration(DIRECT, lambda s, _w: list(s.argv)),
        Configuration(
            COMPRESSOR,
            lambda s, _w: [str(bs.COMPRESSOR), f"--shrinkfit={BUDGET}", "-n", s.name, "--", *s.argv],
            bs._compressor_invoke,
        ),
        Configuration(TOOLTRIM_DEFAULT, _tooltrim(None)),
        Configuration(TOOLTRIM_5000, _tooltrim(5000)),
        Configuration(OURS, _ours),
    ]


# -- landmarks (independent of the engine's detection) -------------------------------------------------------

_CODE = {
    ".py": re.compile(r"^\s*(?:async\s+def|def|class)\s+\w"),
    ".rs": re.compile(r"^\s*(?:pub(?:\([^)]*\))?\s+)?(?:fn|struct|enum|trait|impl|mod)\b"),
    ".go": re.compile(r"^(?:func|type)\s"),
    ".js": re.compile(r"^\s*(?:export\s+)?(?:async\s+)?(?:function|class)\s+\w"),
    ".ts": re.compile(r"^\s*(?:export\s+)?(?:async\s+)?(?:function|class|interface|type)\s+\w"),
    ".java": re.compile(r"^\s*(?:public|private|protected)\s.*(?:class|interface|enum|\()"),
}
_JS = _CODE[".js"]
_TS = _CODE[".ts"]
_CODE.update({".jsx": _JS, ".mjs": _JS, ".cjs": _JS, ".tsx": _TS, ".mts": _TS, ".cts": _TS})
# Test names are landmarks of test files (issue 21): JS/TS describe/it/test calls, Python test_*
# functions and Test* classes, Go Test* functions; Rust #[test] functions in any .rs file (tests live
# in the module they test there).
_JS_TEST = re.compile(r"^\s*(?:describe|it|test)(?:\.\w+)*\s*\(")
_TEST_NAMES = {
    **dict.fromkeys((".js", ".jsx", ".mjs", ".cjs", ".ts", ".tsx", ".mts", ".cts"), _JS_TEST),
    ".py": re.compile(r"^\s*(?:(?:async\s+)?def\s+test\w*\s*\(|class\s+Test\w*)"),
    ".go": re.compile(r"^func\s+(?:\([^)]*\)\s*)?Test\w*\s*\("),
}
_RUST_TEST_ATTR = re.compile(r"^\s*#\[(?:\w+::)*test\b")
_RUST_ATTR = re.compile(r"^\s*#\[")
_RUST_FN = re.compile(r"^\s*(?:pub(?:\([^)]*\))?\s+)?(?:async\s+)?(?:unsafe\s+)?fn\s+\w")
_TEST_FILE = re.compile(r"(?:^test_.*\.py|_test\.py|_test\.go|\.(?:test|spec)\.[cm]?[jt]sx?)$")
_TEST_DIRS = {"test", "tests", "__tests__", "spec"}

_HEADING = re.compile(r"^#{1,6}\s")
_FENCE = re.compile(r"^\s*(?:```|~~~)")
_SECTION = re.compile(r"^\s*\[\[?[^\]=]+\]\]?\s*$")
_NAME_VERSION = re.compile(r"^\s*(?:name|version)\s*=")
_DIFF_HEADER = re.compile(r"^(?:diff --git |@@ )")
_FILE_HEADER = re.compile(r"^(?:--- |\+\+\+ )")
_COMMIT = re.compile(r"^(?:Commit: |Message: |commit [0-9a-f]{7,40})")


def is_test_file(path: str) -> bool:
    """By name (``test_x.py``, ``x_test.go``, ``x.test.ts``, ``x.spec.js``) or by directory (``tests/``)."""
    parts = Path(path).parts
    return bool(_TEST_FILE.search(Path(path).name)) or any(p in _TEST_DIRS for p in parts[:-1])


def test_names(paths: list[str], lines: list[str]) -> list[str]:
    """The test-name lines of files at ``paths`` (independent of the engine, as every landmark here)."""
    tests = [p for p in paths if is_test_file(p)]
    patterns = {_TEST_NAMES[s] for s in {Path(p).suffix for p in tests} if s in _TEST_NAMES}
    rust = any(Path(p).suffix == ".rs" for p in paths)
    found: list[str] = []
    pending = False  # a Rust #[test] attribute waits for its fn
    for line in lines:
        if rust and _RUST_TEST_ATTR.match(line):
            pending = True
        elif pending and _RUST_FN.match(line):
            found.append(line)
            pending = False
        elif pending and not _RUST_ATTR.match(line) and line.strip():
            pending = False
        if any(p.match(line) for p in patterns):
            found.append(line)
    return found


def _lines(text: str) -> list[str]:
    return [line.rstrip("\r") for line in text.split("\n")]


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def shown_lines(text: str) -> set[str]:
    """The whole lines a model reads in ``text``: its own lines, and the lines of every string of
    the JSON values it is made of (mcp-compressor shows a text result as one JSON string)."""
    shown = set(_lines(text))
    decoder = json.JSONDecoder()
    at = 0
    while at < len(text) and text[at] in '[{"':
        try:
            value, at = decoder.raw_decode(text, at)
        except ValueError:
            break
        for string in _strings(value):
            shown.update(_lines(string))
    return shown


def _paths_of(args: dict[str, Any]) -> list[str]:
    paths = args.get("paths")
    if isinstance(paths, list):
        return [p for p in paths if isinstance(p, str)]
    path = args.get("path")
    return [path] if isinstance(path, str) else []


def landmarks_of(tool: str, args: dict[str, Any], text: str) -> list[str]:
    """The lines of ``text`` an agent navigates by, decided by what the call returned (tool and
    path), not by looking at the text's shape."""
    lines = _lines(text)
    found: list[str] = []
    if tool in ("git_diff", "git_show", "git_diff_unstaged", "git_diff_staged"):
        files = any(line.startswith("diff --git ") for line in lines)
        for line in lines:
            if _DIFF_HEADER.match(line) or _COMMIT.match(line) or (not files and _FILE_HEADER.match(line)):
                found.append(line)
        return found
    if tool == "git_log":
        return [line for line in lines if _COMMIT.match(line)]
    if tool not in ("read_text_file", "read_file", "read_multiple_files"):
        return []
    suffixes = {Path(p).suffix for p in _paths_of(args)}
    names = {Path(p).name for p in _paths_of(args)}
    tests = set(test_names(_paths_of(args), lines))
    fenced = False
    for line in lines:
        if ".md" in suffixes and _FENCE.match(line):
            fenced = not fenced
            continue
        heading = ".md" in suffixes and not fenced and _HEADING.match(line)
        code = any(_CODE[s].match(line) for s in suffixes if s in _CODE)
        config = (
            suffixes & {".toml", ".ini", ".cfg"} or names & {"Cargo.lock", "uv.lock", "poetry.lock"}
        ) and (_SECTION.match(line) or _NAME_VERSION.match(line))
        if heading or code or config or line in tests:
            found.append(line)
    return found


def _keys(value: Any) -> Iterator[str]:
    if isinstance(value, dict):
        for key, item in value.items():
            yield key
            yield from _keys(item)
    elif isinstance(value, list):
        for item in value:
            yield from _keys(item)


def field_names(text: str) -> set[str] | None:
    """Every field name of a JSON text (None when the text is not a JSON object or array)."""
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return set(_keys(value)) if isinstance(value, (dict, list)) else None


def _name_visible(name: str, preview: str) -> bool:
    """As a JSON key, or as ``name:``/``name=`` in another rendering (TOON, YAML-like)."""
    if json.dumps(name) in preview:
        return True
    return re.search(r"(?<![\w$-])" + re.escape(name) + r"\s*[:=]", preview) is not None


# -- running -------------------------------------------------------------------------------------------------


@dataclass
class Changed:
    index: int
    tool: str
    kind: str  # shrunk | dedup | overlap | changed
    original_chars: int
    shown_chars: int
    recovered: bool
    landmarks: int
    visible: int  # in the preview or an earlier result of the session
    in_preview: int
    fields: int = 0
    fields_visible: int = 0
    engine_landmarks: int = 0  # the cross-check: the engine's own ``mcpsqueeze.shrink.landmarks``
    engine_visible: int = 0


@dataclass
class Figures:
    name: str
    tokens: int
    chars: int
    errors: int
    changed: list[Changed] = field(default_factory=list)


def _kind(meta: dict[str, Any]) -> str:
    dedup = meta.get("mcpsqueeze/dedup")
    if isinstance(dedup, dict):
        return "overlap" if "overlaps_call" in dedup else "dedup"
    return "shrunk" if isinstance(meta.get("truncation"), dict) else "changed"


def _recoverer(name: str, direct: list[CallRecord], sess: list[tuple[str, str, dict[str, Any]]]) -> Any:
    """``after(peers, calls)`` for ``run_session``: asks each changed result's original back the way
    the configuration documents, and notes whether it equals the direct text byte for byte."""
    recovered: dict[int, bool] = {}

    def after(peers: dict[str, Peer], calls: list[CallRecord]) -> None:
        for call in calls:
            server, tool, args = sess[call.index]
            if call.text == direct[call.index].text:
                continue
            if name == OURS:
                record = call.meta.get("truncation")
                response_id = record.get("response_id") if isinstance(record, dict) else None
                if not isinstance(response_id, str):
                    recovered[call.index] = False
                    continue
                request = {"name": "squeeze_recover", "arguments": {"response_id": response_id}}
            elif name == COMPRESSOR:
                request = {
                    "name": f"{server}_invoke_tool",
                    "arguments": {"tool_name": tool, "tool_input": args, "full": True},
                }
            else:
                recovered[call.index] = False  # tooltrim: no recover tool (its ref= footer names no tool)
                continue
            _, answer = peers[server].request("tools/call", request)
            text = presented_text(answer.get("result") or {})
            recovered[call.index] = text == direct[call.index].text

    after.recovered = recovered  # type: ignore[attr-defined]
    return after


def figures(
    name: str, calls: list[CallRecord], direct: list[CallRecord], recovered: dict[int, bool]
) -> Figures:
    from mcpsqueeze.tokens import count_tokens

    sess = bs.session(Path("/"))  # only tools and argument shapes are read here
    out = Figures(name, sum(count_tokens(c.text) for c in calls), sum(len(c.text) for c in calls), 0)
    out.errors = sum(1 for c in calls if c.error)
    context: set[str] = set()
    earlier: list[str] = []
    for call in calls:
        original = direct[call.index].text
        shown = shown_lines(call.text)
        if call.text != original:
            _server, tool, args = sess[call.index]
            marks = landmarks_of(tool, args, original)
            changed = Changed(
                call.index,
                call.tool,
                _kind(call.meta),
                len(original),
                len(call.text),
                recovered.get(call.index, False),
                len(marks),
                sum(m in shown or m in context for m in marks),
                sum(m in shown for m in marks),
            )
            engine = landmarks(original)
            changed.engine_landmarks = len(engine)
            changed.engine_visible = sum(m in shown or m in context for m in engine)
            names = field_names(original)
            if names:
                changed.fields = len(names)
                seen = [call.text, *earlier]
                changed.fields_visible = sum(any(_name_visible(n, t) for t in seen) for n in names)
            out.changed.append(changed)
        context |= shown
        earlier.append(call.text)
    return out


def report(results: list[Figures]) -> None:
    by = {f.name: f for f in results}
    calls = len(bs.session(Path("/")))
    print(f"\n== peers: {calls} calls, one run (o200k tokens of the text the model receives)")
    head = (
        f"{'configuration':<36} {'tokens':>8} {'vs direct':>9} {'changed':>7} {'kinds':<22} "
        f"{'recovered':>9} {'landmarks':>9} {'visible':>8} {'in prev.':>8} {'JSON fields':>11}"
    )
    print(head)
    direct = by.get(DIRECT)
    for f in results:
        kinds: dict[str, int] = {}
        for c in f.changed:
            kinds[c.kind] = kinds.get(c.kind, 0) + 1
        marks = sum(c.landmarks for c in f.changed)
        visible = sum(c.visible for c in f.changed)
        in_preview = sum(c.in_preview for c in f.changed)
        fields = sum(c.fields for c in f.changed)
        fields_visible = sum(c.fields_visible for c in f.changed)
        ratio = f"{f.tokens / direct.tokens:.2f}x" if direct else "-"
        kind_text = ", ".join(f"{k} {v}" for k, v in sorted(kinds.items())) or "-"
        recovered = sum(c.recovered for c in f.changed)
        print(
            f"{f.name:<36} {f.tokens:>8,} {ratio:>9} {len(f.changed):>7} {kind_text:<22} "
            f"{recovered:>4}/{len(f.changed):<4} {marks:>9} {_share(visible, marks):>8} "
            f"{_share(in_preview, marks):>8} {_share(fields_visible, fields):>11}"
            + (f"   errors {f.errors}" if f.errors else "")
        )
    ours, compressor, trim = by.get(OURS), by.get(COMPRESSOR), by.get(TOOLTRIM_5000)
    if ours is None:
        return
    print("\n== targets (ours at default settings)")
    rows: list[tuple[str, str, bool]] = []
    if compressor is not None:
        ratio = ours.tokens / compressor.tokens
        rows.append(("tokens / mcp-compressor's <= 0.45", f"{ratio:.3f}", ratio <= 0.45))
    if trim is not None:
        rows.append((
            "tokens < tooltrim --max-tokens 5000",
            f"{ours.tokens:,} vs {trim.tokens:,} ({ours.tokens / trim.tokens:.3f}x)",
            ours.tokens < trim.tokens,
        ))  # fmt: skip
    marks = sum(c.landmarks for c in ours.changed)
    visible = sum(c.visible for c in ours.changed)
    rows.append(("landmark coverage >= 90 %", _share(visible, marks), marks == 0 or visible / marks >= 0.9))
    recovered = sum(c.recovered for c in ours.changed)
    rows.append((
        "changed results recovered byte for byte 100 %",
        f"{recovered}/{len(ours.changed)}",
        recovered == len(ours.changed),
    ))  # fmt: skip
    fields = sum(c.fields for c in ours.changed)
    fields_visible = sum(c.fields_visible for c in ours.changed)
    rows.append(("JSON field names kept 100 %", _share(fields_visible, fields), fields_visible == fields))
    for label, value, met in rows:
        print(f"  {label:<48} {value:<28} {'met' if met else 'NOT met'}")
    engine = sum(c.engine_landmarks for c in ours.changed)
    engine_visible = sum(c.engine_visible for c in ours.changed)
    print(
        f"  (landmarks by the engine's own detection, as a cross-check: {engine_visible}/{engine} "
        f"= {_share(engine_visible, engine)} visible)"
    )


def _share(part: int, whole: int) -> str:
    return f"{part / whole:.1%}" if whole else "-"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", type=Path, help="write per-call records here")
    parser.add_argument("--only", help="comma-separated configuration names (direct always runs)")
    parser.add_argument("--verbose", action="store_true", help="one line per changed result")
    parser.add_argument(
        "--rev", help="serve this commit of the repository (default HEAD; the figures move with its files)"
    )
    parser.add_argument("--dump", type=Path, help="write every changed result's preview to this directory")
    args = parser.parse_args(argv)
    for tool, hint in ((bs.COMPRESSOR, "mcp-compressor"), (TOOLTRIM, "tooltrim")):
        if not tool.exists():
            sys.exit(f"{hint} not found at {tool}; see this script's docstring")
    configs = configurations()
    if args.only:
        wanted = {n.strip() for n in args.only.split(",")}
        configs = [c for c in configs if c.name == DIRECT or any(w in c.name for w in wanted)]
    workdir = Path(tempfile.mkdtemp(prefix="bench-peers-"))
    results: list[Figures] = []
    records: list[dict[str, Any]] = []
    try:
        repo = bs._repo(workdir)
        if args.rev:
            subprocess.run(["git", "-C", str(repo), "checkout", "-q", "-B", "bench", args.rev], check=True)
        sess = bs.session(repo)
        direct: list[CallRecord] = []
        for index, config in enumerate(configs):
            after = _recoverer(config.name, direct, sess) if direct else None
            run = bs.run_session(config, index, 0, repo, workdir, after)
            if not direct:
                direct = run.calls
            found = figures(config.name, run.calls, direct, after.recovered if after else {})
            results.append(found)
            print(f"{config.name}: done", file=sys.stderr)
            changed = {c.index: c for c in found.changed}
            if args.dump:
                args.dump.mkdir(parents=True, exist_ok=True)
                slug = re.sub(r"[^a-z0-9]+", "-", config.name.lower()).strip("-")
                for call in run.calls:
                    if call.index in changed:
                        (args.dump / f"{slug}-{call.index:02d}-{call.tool}.txt").write_text(call.text)
            for call in run.calls:
                record = {k: v for k, v in asdict(call).items() if k not in ("text", "meta")}
                from mcpsqueeze.tokens import count_tokens

                record["tokens"] = count_tokens(call.text)
                record["original_chars"] = len(direct[call.index].text)
                if call.index in changed:
                    record["changed"] = asdict(changed[call.index])
                records.append(record)
            if args.verbose and config.name != DIRECT:
                for c in found.changed:
                    print(
                        f"  {config.name[:20]:<20} #{c.index:<2} {c.tool:<20} {c.kind:<8} "
                        f"{c.original_chars:>7} -> {c.shown_chars:>6}  rec {c.recovered!s:<5} "
                        f"marks {c.visible}/{c.landmarks} (preview {c.in_preview})  "
                        f"fields {c.fields_visible}/{c.fields}",
                        file=sys.stderr,
                    )
        report(results)
        if args.json:
            args.json.write_text(json.dumps({"calls": records}, indent=1))
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
