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
(``mcpsqueeze.accounting._tokens``); how many results it changed (any difference from the direct text;
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

Issue 21's agent-cost model (``_agent_cost.py`` says it exactly): for each changed result the agent
needs K things (K = 1 and 3) drawn at random, with a fixed seed, from the DIRECT result (lines of text,
or leaf values of JSON); a need already visible in the context is free, any other costs the cheapest
exact recovery the configuration offers, which is made against the running proxy and counted: its
answer's tokens + 60, and one round trip (ours: the fold's ``lines`` or the item's ``pointer``, several
in one call when the recover tool takes a list, which is probed at run time; mcp-compressor:
``full=true``; tooltrim: unreachable). Printed per configuration: preview tokens, tokens-to-see and
round trips at K=1 and K=3, and the agent's cost = tokens-to-see + 1,000 x round trips.
``--baseline COMMIT`` runs mcpsqueeze from that commit's ``src/`` too (same run, same served
repository) and prints issue 21's targets against it (cost at most 0.85x at K=1, 0.6x at K=3).

Then (or alone, ``--listing-only``: about 20 s here) the o200k tokens of ``tools/list`` as the model
sees it: per server, ``json.dumps`` (default separators) of the list of each tool's ``{"name",
"description", "inputSchema"}`` (the parts a client turns into the model's tool definitions), summed
over the three servers; the whole ``tools`` array (titles, annotations, outputSchema) is shown beside
it. Per configuration: direct, mcp-compressor's standard mode at each level (``-c
low|medium|high|max``, with ``--shrinkfit``), tooltrim, ours (at each ``--compress-tools`` level when
``wrap --help`` lists that flag) and the baseline; then the growth ours adds over direct (issue 21:
at most 300) and, per level, ours against mcp-compressor's (issue 22: at most the anchor's).

    python scripts/bench_peers.py [--rev COMMIT] [--baseline COMMIT] [--json OUT] [--only NAME,...]
                                  [--verbose] [--dump DIR] [--listing-only | --no-listing]

``--rev`` pins the SERVED repository (the session reads this repository's own files and history);
``--baseline`` picks the mcpsqueeze source run beside this tree's.

mcp-compressor: ``python3 -m venv .cache/mcpc && .cache/mcpc/bin/pip install mcp-compressor==0.38.2`` (or
``MCPSQUEEZE_BENCH_MCPC=/path/to/bin/mcp-compressor``);
tooltrim: ``python3 -m venv .cache/tooltrim && .cache/tooltrim/bin/pip install 'tooltrim[mcp]==0.3.3'``.
"""

from __future__ import annotations

import argparse
import compileall
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

import _agent_cost as ac  # the agent-cost model (pure)
import bench_session as bs  # the session, servers, Peer and repository copy
from _agent_cost import shown_lines
from bench_session import CallRecord, Configuration, Peer, Server, presented_text

TOOLTRIM = bs.CACHE / "tooltrim" / "bin" / "tooltrim"
BUDGET = 20000  # mcp-compressor's default --shrinkfit, and ours (DESIGN)
LEVELS = ("low", "medium", "high", "max")  # mcp-compressor's listing levels (and our --compress-tools')

#: The commit the replayed session reads files of by default: its calls name paths of the tree before the
#: core issue's layout move (src/mcpsqueeze/pipeline.py, stages.py, cli.py ...), so the figures stay
#: comparable across runs.
SERVED = "b215b84"

# -- what this script reads from mcpsqueeze itself: only these two, here (repoint them when src/ moves) ----


def count_tokens(text: str) -> int:
    """o200k tokens, by this tree's counter."""
    from mcpsqueeze.accounting._tokens import count_tokens as count

    return count(text)


def engine_landmarks(text: str) -> list[str]:
    """The engine's own landmarks (only for the cross-check column)."""
    from mcpsqueeze.shrink import landmarks

    return landmarks(text)


def _wrap_argv(src: Path | None, extra: tuple[str, ...] = ()) -> list[str]:
    """``mcpsqueeze wrap`` from this tree (``src`` None: bench_session's PYTHONPATH) or another one."""
    head = [] if src is None else ["env", f"PYTHONPATH={src}"]
    return [*head, sys.executable, "-m", "mcpsqueeze", "wrap", *extra]


# -- configurations ------------------------------------------------------------------------------------------


def _tooltrim(max_tokens: int | None) -> Callable[[Server, Path], list[str]]:
    def wrap(server: Server, _workdir: Path) -> list[str]:
        limit = [] if max_tokens is None else ["--max-tokens", str(max_tokens)]
        env = ["env", *(f"{k}={v}" for k, v in server.env.items())] if server.env else []
        return [str(TOOLTRIM), "mcp", *limit, "--", *env, *server.argv]

    return wrap


def _ours_at(src: Path | None, slug: str, extra: tuple[str, ...] = ()) -> Callable[[Server, Path], list[str]]:
    def wrap(server: Server, workdir: Path) -> list[str]:
        return [
            *_wrap_argv(src, extra), "--name", server.name,
            "--recovery-dir", str(workdir / f"recovery-{slug}"),
            "--stats-file", str(workdir / f"stats-{slug}-{server.name}.jsonl"), "--", *server.argv,
        ]  # fmt: skip

    return wrap


def _compressor(level: str | None = None) -> Callable[[Server, Path], list[str]]:
    compression = [] if level is None else ["-c", level]
    return lambda s, _w: [
        str(bs.COMPRESSOR),
        f"--shrinkfit={BUDGET}",
        *compression,
        "-n",
        s.name,
        "--",
        *s.argv,
    ]


DIRECT = "direct"
COMPRESSOR = "mcp-compressor --shrinkfit (20000)"
TOOLTRIM_DEFAULT = "tooltrim mcp (--max-tokens 512)"
TOOLTRIM_5000 = "tooltrim mcp --max-tokens 5000"
OURS = "mcpsqueeze wrap (defaults)"


def baseline_name(label: str) -> str:
    return f"mcpsqueeze wrap @{label} (defaults)"


def is_ours(name: str) -> bool:
    return name.startswith("mcpsqueeze wrap")


def configurations(baseline: tuple[str, Path] | None = None) -> list[Configuration]:
    """``baseline``: (label, src directory) of another mcpsqueeze tree, run just before ours."""
    configs = [
        Configuration(DIRECT, lambda s, _w: list(s.argv)),
        Configuration(COMPRESSOR, _compressor(), bs._compressor_invoke),
        Configuration(TOOLTRIM_DEFAULT, _tooltrim(None)),
        Configuration(TOOLTRIM_5000, _tooltrim(5000)),
    ]
    if baseline is not None:
        configs.append(Configuration(baseline_name(baseline[0]), _ours_at(baseline[1], "baseline")))
    configs.append(Configuration(OURS, _ours_at(None, "ours")))
    return configs


def baseline_tree(rev: str, workdir: Path) -> tuple[str, Path]:
    """(short commit, its ``src/``): ``git archive`` of ``rev`` of this repository, byte-compiled."""
    label = subprocess.run(
        ["git", "-C", str(bs.ROOT), "rev-parse", "--short", rev], capture_output=True, text=True, check=True
    ).stdout.strip()
    dest = workdir / f"baseline-{label}"
    dest.mkdir()
    archive = subprocess.run(
        ["git", "-C", str(bs.ROOT), "archive", rev, "src"], capture_output=True, check=True
    )
    subprocess.run(["tar", "-x", "-C", str(dest)], input=archive.stdout, check=True)
    compileall.compile_dir(str(dest / "src"), quiet=1)
    return label, dest / "src"


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


def _paths_of(args: dict[str, Any]) -> list[str]:
    paths = args.get("paths")
    if isinstance(paths, list):
        return [p for p in paths if isinstance(p, str)]
    path = args.get("path")
    return [path] if isinstance(path, str) else []


def landmarks_of(tool: str, args: dict[str, Any], text: str) -> list[str]:
    """The lines of ``text`` an agent navigates by, decided by what the call returned (tool and
    path), not by looking at the text's shape."""
    lines = ac.text_lines(text)
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
class Cost:
    """One configuration's agent cost at one K (the model: ``_agent_cost.py``)."""

    k: int
    needs: int = 0  # needs of the results this configuration changed
    free: int = 0  # already visible in the context
    unreachable: int = 0  # not visible and no recovery offered
    missed: int = 0  # still not visible after the recovery made for it (a fault of the model or the tool)
    trips: int = 0  # recovery calls (one round trip each)
    tokens: int = 0  # their answers' tokens, plus OVERHEAD each
    whole: int = 0  # calls that fetched a whole original
    parts: int = 0  # calls that fetched folds or JSON nodes
    preview: int = 0  # the session's preview tokens (set by ``figures``)
    log: list[str] = field(default_factory=list)  # per result with needs: what was free, what was asked

    @property
    def to_see(self) -> int:
        return self.preview + self.tokens

    @property
    def cost(self) -> int:
        return self.to_see + ac.TURN * self.trips


@dataclass
class Figures:
    name: str
    tokens: int
    chars: int
    errors: int
    changed: list[Changed] = field(default_factory=list)
    costs: dict[int, Cost] = field(default_factory=dict)
    recovery: str = ""  # what the configuration's recovery offers, as detected


def _kind(meta: dict[str, Any]) -> str:
    dedup = meta.get("mcpsqueeze/dedup")
    if isinstance(dedup, dict):
        return "overlap" if "overlaps_call" in dedup else "dedup"
    return "shrunk" if isinstance(meta.get("truncation"), dict) else "changed"


def _response_id(call: CallRecord) -> str | None:
    record = call.meta.get("truncation")
    response_id = record.get("response_id") if isinstance(record, dict) else None
    return response_id if isinstance(response_id, str) else None


def _types(schema: Any) -> set[str]:
    """Every ``type`` named in a JSON Schema (through anyOf/oneOf/items)."""
    found: set[str] = set()
    if isinstance(schema, dict):
        kind = schema.get("type")
        found.update([kind] if isinstance(kind, str) else kind if isinstance(kind, list) else [])
        for key in ("anyOf", "oneOf", "allOf"):
            for sub in schema.get(key) or []:
                found |= _types(sub)
    return found


@dataclass
class Answer:
    """A recovery as an agent reads it to the end: one call, and one more per ``_meta["mcpsqueeze/next"]``
    page (an answer over the proxy's page size comes in pages since issue 21 item 4)."""

    exact: str  # the text recovered: the pages' exact first blocks joined (a one-page answer: its text)
    shown: str  # what the agent read: the exact text, then each page's note on its own line
    tokens: int  # o200k of every page as the model receives it
    calls: int  # round trips: one per page
    ok: bool


def ask(peer: Peer, tool: str, arguments: dict[str, Any], pages: int = 1000) -> Answer:
    """``tool`` called with ``arguments``, following ``_meta["mcpsqueeze/next"]`` to the last page."""
    exact: list[str] = []
    notes: list[str] = []
    tokens = calls = 0
    ok = True
    while True:
        _, answer = peer.request("tools/call", {"name": tool, "arguments": arguments})
        result = answer.get("result") or {}
        ok = ok and "result" in answer and not result.get("isError")
        text = presented_text(result)
        tokens += count_tokens(text)
        calls += 1
        meta = result.get("_meta") or {}
        blocks = [b for b in result.get("content") or [] if isinstance(b, dict) and b.get("type") == "text"]
        if isinstance(meta.get("mcpsqueeze/page"), dict) and blocks:
            exact.append(str(blocks[0].get("text", "")))
            notes += [str(b.get("text", "")) for b in blocks[1:]]
        else:
            exact.append(text)
        following = meta.get("mcpsqueeze/next")
        if not ok or not isinstance(following, dict) or calls >= pages:
            break
        arguments = following
    joined = "".join(exact)
    shown = "\n".join([joined, *notes]) if notes else joined
    return Answer(joined, shown, tokens, calls, ok)


@dataclass
class _Fetch:
    text: str  # what the agent read
    tokens: int
    whole: bool
    nodes: list[ac.Path]  # JSON nodes of the original it returned, exactly
    asked: str = "whole"  # what the call asked for, for --verbose
    trips: int = 1  # calls made (a paged answer: one per page)

    @classmethod
    def of(cls, answer: Answer, whole: bool, nodes: list[ac.Path], asked: str = "whole") -> _Fetch:
        if answer.calls > 1:
            asked += f" ({answer.calls} pages)"
        return cls(answer.shown, answer.tokens, whole, nodes, asked, answer.calls)

    @property
    def price(self) -> int:
        """What it costs the agent: its tokens, and the overhead and a turn per call."""
        return self.tokens + (ac.OVERHEAD + ac.TURN) * self.trips


class _Agent:
    """Prices the needs of one configuration's session against its running proxies (``_agent_cost``)."""

    def __init__(
        self,
        name: str,
        peers: dict[str, Peer],
        calls: list[CallRecord],
        direct: list[CallRecord],
        sess: list[tuple[str, str, dict[str, Any]]],
        wholes: dict[Any, Answer],
    ) -> None:
        self.name, self.peers, self.calls, self.direct, self.sess = name, peers, calls, direct, sess
        self.wholes = wholes  # whole originals already asked: ours by response id, mcp-compressor by call
        self.documents = {c.index: ac.json_document(direct[c.index].text) for c in calls}
        self.same = {
            i: tuple(j for j in range(i) if direct[j].text == direct[i].text) for i in range(len(direct))
        }
        self.by_number: dict[tuple[str, int], int] = {}  # (server, its proxy's call number) -> index
        numbers: dict[str, int] = {}
        for i, (server, _tool, _args) in enumerate(sess):
            numbers[server] = numbers.get(server, 0) + 1
            self.by_number[server, numbers[server]] = i
        self.recover_tools: dict[str, str] = {}
        self.multi_lines = self.multi_pointer = False
        if is_ours(name):
            self._probe()

    def _ask(self, server: str, tool: str, arguments: dict[str, Any], pages: int = 1000) -> Answer:
        return ask(self.peers[server], tool, arguments, pages)

    def _probe(self) -> None:
        """Our recover tool per server (tools/list), and whether it takes several line ranges or
        several pointers in one call: its inputSchema says so, or a probe call is answered."""
        for server, peer in self.peers.items():
            _, listed = peer.request("tools/list", {})
            tools = (listed.get("result") or {}).get("tools") or []
            mine = [t for t in tools if str(t.get("name", "")).startswith("squeeze_recover")]
            if mine:
                self.recover_tools[server] = mine[-1]["name"]
                properties = (mine[-1].get("inputSchema") or {}).get("properties") or {}
                self.multi_lines |= "array" in _types(properties.get("lines"))
                self.multi_pointer |= "array" in _types(properties.get("pointer"))
        for call in self.calls:
            response_id, tool = _response_id(call), self.recover_tools.get(call.server)
            if response_id is None or tool is None:
                continue
            document = self.documents[call.index]
            if document is None and not self.multi_lines and self.direct[call.index].text.count("\n") >= 2:
                probe = {"response_id": response_id, "lines": "1-1,2-2"}
                self.multi_lines = self._ask(call.server, tool, probe, pages=1).ok
            elif document and not self.multi_pointer and len(document) >= 2:
                keys = list(range(2)) if isinstance(document, list) else list(document)[:2]
                pointers = [ac.pointer_of((k,)) for k in keys]
                probe = {"response_id": response_id, "pointer": pointers}
                self.multi_pointer = self._ask(call.server, tool, probe, pages=1).ok

    def describe(self) -> str:
        if self.name == COMPRESSOR:
            return "full=true (the whole original)"
        if not is_ours(self.name):
            return "no recovery"
        if not self.recover_tools:
            return "no recover tool listed"
        lines = "several ranges per call" if self.multi_lines else "one range per call"
        pointer = "several pointers per call" if self.multi_pointer else "one pointer per call"
        return f"{lines}, {pointer}"

    def cost(self, k: int, needs: dict[int, list[ac.Need]]) -> Cost:
        out = Cost(k)
        context = ac.Context()
        for call in self.calls:
            i = call.index
            context.add(call.text)
            if call.text == self.direct[i].text:
                continue
            wanted, document = needs[i][:k], self.documents[i]
            unseen = [n for n in wanted if not context.sees(n, document, self.same[i])]
            out.needs += len(wanted)
            out.free += len(wanted) - len(unseen)
            if not unseen:
                continue
            if self.name == COMPRESSOR:
                fetches = [self._compressor_full(i)]
            elif is_ours(self.name) and call.server in self.recover_tools:
                fetches = self._ours(call, unseen, document)
            else:
                out.unreachable += len(unseen)
                out.log.append(f"#{i:<2} {call.tool:<20} needs {len(wanted)}, {len(unseen)} unreachable")
                continue
            out.log.append(
                f"#{i:<2} {call.tool:<20} needs {len(wanted)}, free {len(wanted) - len(unseen)}: "
                + ("; ".join(f"{f.asked} {f.tokens:,} tokens" for f in fetches) or "unreachable")
            )
            for fetch in fetches:
                out.trips += fetch.trips
                out.tokens += fetch.tokens + ac.OVERHEAD * fetch.trips
                out.whole += fetch.whole
                out.parts += not fetch.whole
                context.add(fetch.text)
                for path in fetch.nodes:
                    context.add_node(i, path)
            missed = [n for n in unseen if not context.sees(n, document, self.same[i])]
            out.missed += len(missed)
            for need in missed:
                where = f"line {need.line}" if need.path is None else ac.pointer_of(need.path)
                out.log.append(f"#{i:<2} MISSED {where}: {(need.text or repr(need.value))[:80]!r}")
        return out

    def _compressor_full(self, i: int) -> _Fetch:
        if i not in self.wholes:
            server, tool, args = self.sess[i]
            arguments = {"tool_name": tool, "tool_input": args, "full": True}
            self.wholes[i] = self._ask(server, f"{server}_invoke_tool", arguments)
        return _Fetch.of(self.wholes[i], True, [()])

    def _whole(self, server: str, response_id: str) -> _Fetch:
        if response_id not in self.wholes:
            tool = self.recover_tools[server]
            self.wholes[response_id] = self._ask(server, tool, {"response_id": response_id})
        return _Fetch.of(self.wholes[response_id], True, [()])

    def _fetch(
        self, server: str, response_id: str, arguments: dict[str, Any], nodes: list[ac.Path]
    ) -> _Fetch:
        found = self._ask(server, self.recover_tools[server], {"response_id": response_id, **arguments})
        asked = ", ".join(f"{k} {v}" for k, v in arguments.items()) + ("" if found.ok else " (error)")
        return _Fetch.of(found, False, nodes if found.ok else [], asked)

    def _markers(self, call: CallRecord) -> str:
        """The preview whose fold markers and JSON number this result's original: its own, or for a
        repeat (a dedup pointer) the preview of the call it repeats."""
        dedup = call.meta.get("mcpsqueeze/dedup")
        number = dedup.get("same_as_call") if isinstance(dedup, dict) else None
        if isinstance(number, int) and (call.server, number) in self.by_number:
            return self.calls[self.by_number[call.server, number]].text
        return call.text

    def _ours(self, call: CallRecord, unseen: list[ac.Need], document: Any) -> list[_Fetch]:
        """The cheapest exact calls for ``unseen``: the folds that cover the lines, or the JSON nodes
        where the preview stops holding the leaves; the whole original when a need has neither, or
        when it costs the agent less than the parts."""
        response_id = _response_id(call)
        if response_id is None:
            return []
        folds, nodes, whole = ac.parts_for(unseen, self._markers(call), document)
        everything = self._whole(call.server, response_id)
        if whole:
            return [everything]
        requests: list[tuple[dict[str, Any], list[ac.Path]]]
        if folds:
            specs = [f"{a}-{b}" for a, b in sorted(folds)]
            if self.multi_lines and len(specs) > 1:
                requests = [({"lines": ",".join(specs)}, [])]
            else:
                requests = [({"lines": spec}, []) for spec in specs]
        else:
            kept = ac.outermost(nodes)
            pointers = [ac.pointer_of(p) for p in kept]
            if self.multi_pointer and len(pointers) > 1:
                requests = [({"pointer": pointers}, kept)]
            else:
                requests = [
                    ({"pointer": pointer}, [path]) for pointer, path in zip(pointers, kept, strict=True)
                ]
        fetches = [self._fetch(call.server, response_id, args, paths) for args, paths in requests]
        return [everything] if everything.price < sum(f.price for f in fetches) else fetches


def _recoverer(
    name: str,
    direct: list[CallRecord],
    sess: list[tuple[str, str, dict[str, Any]]],
    needs: dict[int, list[ac.Need]],
) -> Any:
    """``after(peers, calls)`` for ``run_session``: asks each changed result's original back the way
    the configuration documents, and notes whether it equals the direct text byte for byte; then
    prices the agent's needs (``_Agent``) while the proxies still run."""
    recovered: dict[int, bool] = {}
    costs: dict[int, Cost] = {}

    def after(peers: dict[str, Peer], calls: list[CallRecord]) -> None:
        wholes: dict[Any, Answer] = {}
        for call in calls:
            server, tool, args = sess[call.index]
            if call.text == direct[call.index].text:
                continue
            if is_ours(name):
                response_id = _response_id(call)
                if response_id is None:
                    recovered[call.index] = False
                    continue
                key: Any = response_id
                request = {"name": "squeeze_recover", "arguments": {"response_id": response_id}}
            elif name == COMPRESSOR:
                key = call.index
                request = {
                    "name": f"{server}_invoke_tool",
                    "arguments": {"tool_name": tool, "tool_input": args, "full": True},
                }
            else:
                recovered[call.index] = False  # tooltrim: no recover tool (its ref= footer names no tool)
                continue
            whole = ask(peers[server], str(request["name"]), request["arguments"])
            wholes[key] = whole
            recovered[call.index] = whole.exact == direct[call.index].text
        agent = _Agent(name, peers, calls, direct, sess, wholes)
        after.recovery = agent.describe()  # type: ignore[attr-defined]
        for k in ac.KS:
            costs[k] = agent.cost(k, needs)

    after.recovered = recovered  # type: ignore[attr-defined]
    after.costs = costs  # type: ignore[attr-defined]
    after.recovery = "-"  # type: ignore[attr-defined]
    return after


def figures(
    name: str, calls: list[CallRecord], direct: list[CallRecord], recovered: dict[int, bool]
) -> Figures:
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
            engine = engine_landmarks(original)
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


def report_costs(results: list[Figures], baseline: str | None) -> None:
    """Issue 21's agent cost per configuration, beside the token table; its targets against ``baseline``."""
    print(
        f"\n== agent cost (issue 21): per changed result, K needs drawn from the direct result (seed "
        f"{ac.SEED}); a recovery costs its answer + {ac.OVERHEAD} tokens and one round trip; "
        f"cost = tokens to see + {ac.TURN:,} x round trips"
    )
    head = f"{'configuration':<36} {'preview':>8}"
    for k in ac.KS:
        head += f" | K={k}: {'needs':>5} {'free':>4} {'to see':>8} {'trips':>5} {'cost':>8}"
    print(head + " | recovery")
    for f in results:
        row = f"{f.name:<36} {f.tokens:>8,}"
        notes = []
        for k in ac.KS:
            c = f.costs[k]
            if c.unreachable:
                row += f" | K={k}: {c.needs:>5} {c.free:>4} {'-':>8} {'-':>5} {'-':>8}"
                notes.append(f"K={k}: {c.unreachable} of {c.needs} needs unreachable")
            else:
                row += f" | K={k}: {c.needs:>5} {c.free:>4} {c.to_see:>8,} {c.trips:>5} {c.cost:>8,}"
            if c.trips:
                notes.append(f"K={k}: {c.parts} part + {c.whole} whole calls")
            if c.missed:
                notes.append(f"K={k}: {c.missed} needs MISSED by their recovery")
        print(row + f" | {f.recovery}" + (f" ({'; '.join(notes)})" if notes else ""))
    by = {f.name: f for f in results}
    ours, base = by.get(OURS), by.get(baseline_name(baseline)) if baseline else None
    if ours is None or base is None:
        return
    print(f"\n== targets of issue 21 (ours against {base.name}, same run)")
    for k, limit in ((1, 0.85), (3, 0.6)):
        mine, theirs = ours.costs[k], base.costs[k]
        ratio = mine.cost / theirs.cost if theirs.cost else float("inf")
        value = (
            f"{mine.cost:,} vs {theirs.cost:,} = {ratio:.3f}x (to see {mine.to_see:,} vs {theirs.to_see:,}, "
            f"trips {mine.trips} vs {theirs.trips})"
        )
        print(
            f"  {f'agent cost at K={k} <= {limit}x':<32} {value:<78} {'met' if ratio <= limit else 'NOT met'}"
        )


# -- tools/list ----------------------------------------------------------------------------------------------


@dataclass
class Listed:
    name: str
    level: str  # the listing level (mcp-compressor's -c, our --compress-tools), "-" when there is none
    tools: int
    tokens: int  # o200k of the model's view: json.dumps([{name, description, inputSchema}]), summed
    whole: int  # o200k of json.dumps(the whole tools array), summed
    error: str | None = None


def model_view(tools: list[dict[str, Any]]) -> str:
    """What a client turns into the model's tool definitions: each tool's name, description and
    inputSchema (``json.dumps``, default separators; a missing one is ``null``)."""
    return json.dumps([{k: t.get(k) for k in ("name", "description", "inputSchema")} for t in tools])


def list_tools(wrap: Callable[[Server, Path], list[str]], repo: Path, workdir: Path) -> dict[str, list[Any]]:
    """Every server's tools/list (all pages) through ``wrap``; the servers start together."""
    servers = bs.servers(repo, workdir, 99)
    peers = {s.name: Peer(wrap(s, workdir), {**bs._env(), **s.env}, workdir) for s in servers}
    listed: dict[str, list[Any]] = {}
    try:
        for peer in peers.values():
            peer.send_initialize()
        for name, peer in peers.items():
            peer.initialize(sent=True)
            tools: list[Any] = []
            params: dict[str, Any] = {}
            while True:
                _, answer = peer.request("tools/list", params)
                result = answer.get("result") or {}
                if "result" not in answer:
                    raise RuntimeError(f"tools/list failed: {json.dumps(answer)[:300]}")
                tools += result.get("tools") or []
                if not result.get("nextCursor"):
                    break
                params = {"cursor": result["nextCursor"]}
            listed[name] = tools
    finally:
        for peer in peers.values():  # all told to leave first, then waited for
            if peer.proc.stdin is not None:
                peer.proc.stdin.close()
        for peer in peers.values():
            peer.close()
    return listed


def has_compress_tools(src: Path | None) -> bool:
    """Whether that tree's ``mcpsqueeze wrap --help`` lists ``--compress-tools`` (issue 22)."""
    env = bs._env() if src is None else {**bs._env(), "PYTHONPATH": str(src)}
    help_text = subprocess.run(
        [sys.executable, "-m", "mcpsqueeze", "wrap", "--help"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    ).stdout
    return "--compress-tools" in help_text


def listing_configurations(
    baseline: tuple[str, Path] | None, wanted: Callable[[str], bool]
) -> list[tuple[str, str, Callable[[Server, Path], list[str]]]]:
    rows: list[tuple[str, str, Callable[[Server, Path], list[str]]]] = [
        (DIRECT, "-", lambda s, _w: list(s.argv))
    ]
    if wanted(COMPRESSOR):
        rows += [(COMPRESSOR, level, _compressor(level)) for level in LEVELS]
    if wanted(TOOLTRIM_DEFAULT):
        rows.append((TOOLTRIM_DEFAULT, "-", _tooltrim(None)))
    trees = [] if baseline is None else [(baseline_name(baseline[0]), baseline[1], "baseline")]
    for name, src, slug in [*trees, (OURS, None, "ours")]:
        if not wanted(name):
            continue
        if has_compress_tools(src):
            for level in ("off", *LEVELS):
                rows.append((name, level, _ours_at(src, f"{slug}-{level}", ("--compress-tools", level))))
        else:
            rows.append((name, "-", _ours_at(src, slug)))
    return rows


def run_listing(
    baseline: tuple[str, Path] | None, wanted: Callable[[str], bool], repo: Path, workdir: Path
) -> list[Listed]:
    out = []
    for name, level, wrap in listing_configurations(baseline, wanted):
        try:
            listed = list_tools(wrap, repo, workdir)
        except (RuntimeError, OSError) as exc:
            out.append(Listed(name, level, 0, 0, 0, str(exc)[:200]))
            continue
        tools = [t for server in listed.values() for t in server]
        tokens = sum(count_tokens(model_view(t)) for t in listed.values())
        whole = sum(count_tokens(json.dumps(t)) for t in listed.values())
        out.append(Listed(name, level, len(tools), tokens, whole))
    return out


def report_listing(rows: list[Listed], baseline: str | None) -> None:
    print(
        "\n== tools/list: o200k tokens of what the model carries on every turn: per server, json.dumps "
        "of [{name, description, inputSchema} per tool], summed over fs, git and memory (whole tools arrays "
        "beside)"
    )
    print(
        f"{'configuration':<36} {'level':<7} {'tools':>5} {'tokens':>7} {'vs direct':>9} {'whole array':>11}"
    )
    direct = next((r for r in rows if r.name == DIRECT and not r.error), None)
    for r in rows:
        if r.error:
            print(f"{r.name:<36} {r.level:<7} failed: {r.error}")
            continue
        growth = f"{r.tokens - direct.tokens:+,}" if direct else "-"
        print(f"{r.name:<36} {r.level:<7} {r.tools:>5} {r.tokens:>7,} {growth:>9} {r.whole:>11,}")
    if direct is None:
        return
    print("\n== tools/list targets")
    for name in [n for n in (baseline_name(baseline) if baseline else None, OURS) if n]:
        plain = next((r for r in rows if r.name == name and r.level in ("-", "off") and not r.error), None)
        if plain is not None:
            growth = plain.tokens - direct.tokens
            label = f"{name}: growth over direct <= 300 (issue 21)"
            print(f"  {label:<76} {growth:>+7,}   {'met' if growth <= 300 else 'NOT met'}")
        anchor = {r.level: r for r in rows if r.name == COMPRESSOR and not r.error}
        for r in rows:
            if r.name == name and r.level in anchor and not r.error:
                label = f"{name} at {r.level} <= mcp-compressor's (issue 22)"
                value = f"{r.tokens:,} vs {anchor[r.level].tokens:,}"
                met = r.tokens <= anchor[r.level].tokens
                print(f"  {label:<76} {value:>16}   {'met' if met else 'NOT met'}")


def _share(part: int, whole: int) -> str:
    return f"{part / whole:.1%}" if whole else "-"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", type=Path, help="write per-call records, costs and listings here")
    parser.add_argument("--only", help="comma-separated configuration names (direct always runs)")
    parser.add_argument("--verbose", action="store_true", help="one line per changed result")
    parser.add_argument(
        "--rev",
        default=SERVED,
        help=f"serve this commit of the repository (default {SERVED}, the last tree the session's file reads "
        "match; the figures move with the served files)",
    )
    parser.add_argument(
        "--baseline",
        metavar="COMMIT",
        help="also run mcpsqueeze from this commit's src/ (e.g. main) and compare",
    )
    parser.add_argument("--dump", type=Path, help="write every changed result's preview to this directory")
    parser.add_argument("--listing-only", action="store_true", help="only the tools/list figures (quick)")
    parser.add_argument("--no-listing", action="store_true", help="skip the tools/list figures")
    args = parser.parse_args(argv)
    wanted_names = {n.strip() for n in args.only.split(",")} if args.only else None

    def wanted(name: str) -> bool:
        return wanted_names is None or name == DIRECT or any(w in name for w in wanted_names)

    for tool, hint, names in (
        (bs.COMPRESSOR, "mcp-compressor", (COMPRESSOR,)),
        (TOOLTRIM, "tooltrim", (TOOLTRIM_DEFAULT, TOOLTRIM_5000)),
    ):
        if not tool.exists() and any(wanted(n) for n in names):
            sys.exit(f"{hint} not found at {tool}; see this script's docstring (or leave it out with --only)")

    workdir = Path(tempfile.mkdtemp(prefix="bench-peers-"))
    results: list[Figures] = []
    records: list[dict[str, Any]] = []
    listing: list[Listed] = []
    try:
        repo = bs._repo(workdir)
        if args.rev:
            subprocess.run(["git", "-C", str(repo), "checkout", "-q", "-B", "bench", args.rev], check=True)
        baseline = baseline_tree(args.baseline, workdir) if args.baseline else None
        label = baseline[0] if baseline else None
        if not args.no_listing:
            listing = run_listing(baseline, wanted, repo, workdir)
            print("tools/list: done", file=sys.stderr)
        if not args.listing_only:
            configs = [c for c in configurations(baseline) if wanted(c.name)]
            sess = bs.session(repo)
            direct: list[CallRecord] = []
            needs: dict[int, list[ac.Need]] = {}
            for index, config in enumerate(configs):
                after = _recoverer(config.name, direct, sess, needs) if direct else None
                run = bs.run_session(config, index, 0, repo, workdir, after)
                if not direct:
                    direct = run.calls
                    needs.update({c.index: ac.needs_of(c.index, c.text) for c in direct})
                found = figures(config.name, run.calls, direct, after.recovered if after else {})
                found.costs = after.costs if after else {k: Cost(k) for k in ac.KS}
                found.recovery = after.recovery if after else "-"
                for cost in found.costs.values():
                    cost.preview = found.tokens
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
                    record = {k: v for k, v in asdict(call).items() if k not in ("text", "meta", "result")}
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
            report_costs(results, label)
            if args.verbose:
                for f in results:
                    for k, cost in f.costs.items():
                        for line in cost.log:
                            print(f"  {f.name[:24]:<24} K={k} {line}", file=sys.stderr)
        if listing:
            report_listing(listing, label)
        if args.json:
            costs = {
                f.name: {k: {**asdict(c), "to_see": c.to_see, "cost": c.cost} for k, c in f.costs.items()}
                for f in results
            }
            args.json.write_text(
                json.dumps(
                    {"calls": records, "costs": costs, "listing": [asdict(r) for r in listing]}, indent=1
                )
            )
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
