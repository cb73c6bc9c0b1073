"""The replayed session's tokens, recoveries, landmarks and agent cost, side by side with peers; then
what each route's ``tools/list`` costs the model on every turn.

Routes, each replayed once at its defaults (token figures do not depend on the machine's load): direct;
mcp-compressor ``--shrinkfit`` (20,000); tooltrim ``mcp`` at its default (512 of its tokens, characters
/ 4) and at ``--max-tokens 5000`` (the size of our 20,000 characters); ``mcpsqueeze wrap`` from each tree.

Per route: o200k tokens of the text the model receives; the results it changed (ours split into shrunk,
dedup and overlap by ``_meta``); those whose original its own recovery returns byte for byte equal to
the direct result (ours ``squeeze_recover`` with the response id, mcp-compressor the same call with
``full: true``; tooltrim has none); the landmarks of the changed text results that stay visible (a whole
line of the preview or of an earlier result; found by ``landmarks_of`` from what the call read, not by
the engine); the field names of the changed JSON results still visible; the agent cost of
``agent_cost.py`` at K=1 and K=3. ``tools/list`` is counted as a client shows it to the model: per
server ``json.dumps`` of each tool's name, description and inputSchema, summed over the three servers;
mcp-compressor at each listing level (``-c``), ours at each ``--compress-tools`` level.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
from pathlib import Path
from typing import Any

from . import agent_cost as ac
from ._harness import Peer, Tree, count_tokens, progress, ratio, text_of
from .replay import Call, Replay, Route, anchor, direct, ours, replayed, served_repo, tooltrim

#: A recovery as the agent read it: (its text, tokens, calls made, the JSON nodes it returned whole).
Fetch = tuple[str, int, int, list[ac.Path]]
WHOLE: list[ac.Path] = [()]
LEVELS = ("low", "medium", "high", "max")  # mcp-compressor's listing levels, and our --compress-tools'


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--rev", default=None, help="serve this commit of the repository (default: replay.SERVED)"
    )
    parser.add_argument(
        "--only", help="comma-separated words: only the routes whose name holds one (direct always)"
    )
    parser.add_argument("--listing", choices=("yes", "no", "only"), default="yes", help="tools/list figures")
    parser.add_argument(
        "--verbose", action="store_true", help="a row per changed result, and the needs priced"
    )


# -- landmarks and field names, independent of the engine ----------------------------------------------------

_DEF = re.compile(r"^\s*(?:async\s+def|def|class)\s+\w")
_HEADING = re.compile(r"^#{1,6}\s")
_FENCE = re.compile(r"^\s*(?:```|~~~)")
_SECTION = re.compile(r"^\s*(?:\[\[?[^\]=]+\]\]?|name\s*=|version\s*=)")
_DIFF = re.compile(r"^(?:diff --git |@@ )")
_FILE = re.compile(r"^(?:--- |\+\+\+ )")
_COMMIT = re.compile(r"^(?:Commit: |Message: |commit [0-9a-f]{7,40})")


def landmarks_of(tool: str, arguments: dict[str, Any], text: str) -> list[str]:
    """The lines an agent navigates by, decided by what the call read (tool and path): definitions of
    Python files, Markdown headings outside fences, TOML sections and name/version lines, diff file and
    hunk headers, commit headers and subjects."""
    lines = ac.text_lines(text)
    if tool in ("git_diff", "git_show"):
        files = any(line.startswith("diff --git ") for line in lines)
        return [x for x in lines if _DIFF.match(x) or _COMMIT.match(x) or (not files and _FILE.match(x))]
    if tool == "git_log":
        return [x for x in lines if _COMMIT.match(x)]
    if tool not in ("read_text_file", "read_multiple_files"):
        return []
    paths = arguments.get("paths") or [arguments.get("path", "")]
    suffixes = {Path(p).suffix for p in paths}
    found, fenced = [], False
    for line in lines:
        if ".md" in suffixes and _FENCE.match(line):
            fenced = not fenced
        elif (
            (".md" in suffixes and not fenced and _HEADING.match(line))
            or (".py" in suffixes and _DEF.match(line))
            or (".toml" in suffixes and _SECTION.match(line))
        ):
            found.append(line)
    return found


def field_names(text: str) -> set[str]:
    """Every field name of a JSON object or array (none for other text)."""
    document = ac.json_document(text)
    names: set[str] = set()
    stack = [document] if document is not None else []
    while stack:
        value = stack.pop()
        if isinstance(value, dict):
            names.update(value)
            stack += value.values()
        elif isinstance(value, list):
            stack += value
    return names


def _name_visible(name: str, shown: str) -> bool:
    """As a JSON key, or as ``name:`` / ``name=`` in another rendering (TOON)."""
    return json.dumps(name) in shown or re.search(rf"(?<![\w$-]){re.escape(name)}\s*[:=]", shown) is not None


def kind(meta: dict[str, Any]) -> str:
    dedup = meta.get("mcpsqueeze/dedup")
    if isinstance(dedup, dict):
        return "overlap" if "overlaps_call" in dedup else "dedup"
    return "shrunk" if isinstance(meta.get("truncation"), dict) else "changed"


def response_id(call: Call) -> str | None:
    record = call.meta.get("truncation")
    found = record.get("response_id") if isinstance(record, dict) else None
    return found if isinstance(found, str) else None


# -- recovering and pricing against the running proxies ------------------------------------------------------


def ask(peer: Peer, tool: str, arguments: dict[str, Any]) -> tuple[str, str, int, int, bool]:
    """A recovery read to its end, following ``_meta["mcpsqueeze/next"]`` page by page: (the exact text
    joined, what the agent read, its tokens, the calls made, whether every call succeeded)."""
    exact: list[str] = []
    notes: list[str] = []
    tokens = calls = 0
    ok = True
    while True:
        _, answer = peer.request("tools/call", {"name": tool, "arguments": arguments})
        result = answer.get("result") or {}
        ok = ok and "result" in answer and not result.get("isError")
        text = text_of(result)
        tokens += count_tokens(text)
        calls += 1
        meta = result.get("_meta") or {}
        blocks = [b.get("text", "") for b in result.get("content") or [] if b.get("type") == "text"]
        if isinstance(meta.get("mcpsqueeze/page"), dict) and blocks:
            exact.append(blocks[0])
            notes += blocks[1:]
        else:
            exact.append(text)
        following = meta.get("mcpsqueeze/next")
        if not ok or not isinstance(following, dict):
            joined = "".join(exact)
            return joined, "\n".join([joined, *notes]), tokens, calls, ok
        arguments = following


class Pricer:
    """One route's replay, still running: recovers what it changed and prices the agent's needs."""

    def __init__(self, route: Route, replay: Replay, plain: list[Call]) -> None:
        self.route, self.replay, self.plain = route, replay, plain
        self.documents = {c.index: ac.json_document(plain[c.index].text) for c in replay.calls}
        self.same = {
            i: tuple(j for j in range(i) if plain[j].text == plain[i].text) for i in range(len(plain))
        }
        self.by_number: dict[tuple[str, int], int] = {}  # (server, its proxy's call number) -> index
        for call in plain:
            self.by_number[call.server, sum(c.server == call.server for c in plain[: call.index + 1])] = (
                call.index
            )
        self.tools: dict[str, str] = {}
        for server, tools in replay.tools.items() if route.ours else ():
            mine = [t["name"] for t in tools if str(t.get("name", "")).startswith("squeeze_recover")]
            self.tools.update({server: mine[-1]} if mine else {})
        self.wholes: dict[Any, tuple[str, str, int, int, bool]] = {}
        self.recovered = {c.index: self._whole(c)[0] == plain[c.index].text for c in self.changed()}

    def changed(self) -> list[Call]:
        return [c for c in self.replay.calls if c.text != self.plain[c.index].text]

    def _whole(self, call: Call) -> tuple[str, str, int, int, bool]:
        """The whole original, the way the route documents it (asked once)."""
        server, tool, arguments = call.server, call.tool, call.arguments
        if self.route.wrapped:
            key: Any = call.index
            name, asked = f"{server}_invoke_tool", {"tool_name": tool, "tool_input": arguments, "full": True}
        elif server in self.tools and response_id(call):
            key, name, asked = response_id(call), self.tools[server], {"response_id": response_id(call)}
        else:
            return "", "", 0, 0, False
        if key not in self.wholes:
            self.wholes[key] = ask(self.replay.peers[server], name, asked)
        return self.wholes[key]

    def _markers(self, call: Call) -> str:
        """The preview whose fold markers number this original: its own, or for a dedup pointer the
        preview of the call it repeats."""
        dedup = call.meta.get("mcpsqueeze/dedup")
        number = dedup.get("same_as_call") if isinstance(dedup, dict) else None
        at = self.by_number.get((call.server, number)) if isinstance(number, int) else None
        return self.replay.calls[at].text if at is not None else call.text

    def _parts(self, call: Call, unseen: list[ac.Need]) -> list[Fetch]:
        """Ours: (text read, tokens, calls, JSON nodes returned) of the cheapest exact recoveries."""
        rid, tool, peer = response_id(call), self.tools[call.server], self.replay.peers[call.server]
        folds, nodes, whole = ac.parts_for(unseen, self._markers(call), self.documents[call.index])
        _, shown, tokens, calls, _ = self._whole(call)
        everything: list[Fetch] = [(shown, tokens, calls, WHOLE)]
        if whole:
            return everything
        if folds:  # every range in one call, and every pointer in one: the recover tool takes several
            arguments: dict[str, Any] = {"lines": ",".join(f"{a}-{b}" for a, b in sorted(folds))}
            paths: list[ac.Path] = []
        else:
            paths = ac.outermost(nodes)
            pointers = [ac.pointer_of(p) for p in paths]
            arguments = {"pointer": pointers if len(pointers) > 1 else pointers[0]}
        _, shown, tokens, calls, ok = ask(peer, tool, {"response_id": rid, **arguments})
        parts: list[Fetch] = [(shown, tokens, calls, paths if ok else [])]

        def price(fetches: list[Fetch]) -> int:
            return sum(tokens + (ac.OVERHEAD + ac.TURN) * calls for _, tokens, calls, _ in fetches)

        return everything if price(everything) < price(parts) else parts

    def cost(self, k: int, needs: dict[int, list[ac.Need]], log: list[str]) -> dict[str, int]:
        out = dict.fromkeys(("needs", "free", "unreachable", "missed", "trips", "tokens"), 0)
        context = ac.Context()
        for call in self.replay.calls:
            i = call.index
            context.add(call.text)
            if call.text == self.plain[i].text:
                continue
            wanted, document = needs[i][:k], self.documents[i]
            unseen = [n for n in wanted if not context.sees(n, document, self.same[i])]
            out["needs"] += len(wanted)
            out["free"] += len(wanted) - len(unseen)
            if not unseen:
                continue
            if self.route.wrapped:
                _, shown, tokens, calls, _ = self._whole(call)
                fetches: list[Fetch] = [(shown, tokens, calls, WHOLE)]
            elif call.server in self.tools and response_id(call):
                fetches = self._parts(call, unseen)
            else:
                out["unreachable"] += len(unseen)
                continue
            for shown, tokens, calls, paths in fetches:
                out["trips"] += calls
                out["tokens"] += tokens + ac.OVERHEAD * calls
                context.add(shown)
                for path in paths:
                    context.add_node(i, path)
            missed = [n for n in unseen if not context.sees(n, document, self.same[i])]
            out["missed"] += len(missed)
            log.append(f"K={k} #{i} {call.tool}: {len(unseen)} of {len(wanted)} hidden, {len(fetches)} calls")
        return out


def measure(
    route: Route, replay: Replay, plain: list[Call], needs: dict[int, list[ac.Need]], verbose: bool
) -> dict[str, Any]:
    """The figures of one route's replay (its processes still running)."""
    pricer = Pricer(route, replay, plain)
    tokens = sum(count_tokens(c.text) for c in replay.calls)
    rows: list[str] = []
    kinds: dict[str, int] = {}
    marks = visible = fields = fields_seen = 0
    context: set[str] = set()
    earlier: list[str] = []
    for call in replay.calls:
        original = plain[call.index].text
        shown = ac.shown_lines(call.text)
        if call.text != original:
            found = landmarks_of(call.tool, call.arguments, original)
            seen = sum(m in shown or m in context for m in found)
            names = field_names(original)
            named = sum(any(_name_visible(n, t) for t in (call.text, *earlier)) for n in names)
            marks, visible = marks + len(found), visible + seen
            fields, fields_seen = fields + len(names), fields_seen + named
            kinds[kind(call.meta)] = kinds.get(kind(call.meta), 0) + 1
            recovered = "recovered" if pricer.recovered[call.index] else "NOT recovered"
            size = f"{len(original):,} -> {len(call.text):,} chars, {seen}/{len(found)} landmarks"
            rows.append(f"#{call.index} {call.tool}: {kind(call.meta)}, {size}, {recovered}")
        context |= shown
        earlier.append(call.text)
    log: list[str] = []
    costs = {}
    for k in ac.KS:
        cost = pricer.cost(k, needs, log)
        to_see = tokens + cost.pop("tokens")
        costs[f"K={k}"] = {**cost, "to see": to_see, "cost": to_see + ac.TURN * cost["trips"]}
    figures = {
        "tokens": tokens,
        "changed": len(rows),
        "kinds": kinds,
        "recovered byte for byte": f"{sum(pricer.recovered.values())}/{len(rows)}",
        "landmarks visible": f"{visible}/{marks}",
        "JSON field names visible": f"{fields_seen}/{fields}",
        "agent cost": costs,
    }
    if verbose:
        figures["changed results"] = rows
        figures["needs priced"] = log
    return figures


# -- tools/list ----------------------------------------------------------------------------------------------


def listing_tokens(route: Route, repo: Path, workdir: Path) -> dict[str, int]:
    """What the model carries on every turn: per server, json.dumps of [{name, description, inputSchema}]."""
    with replayed(route, repo, workdir, 99, pause=0, calls=False) as replay:
        view = [
            [{k: t.get(k) for k in ("name", "description", "inputSchema")} for t in v]
            for v in replay.tools.values()
        ]
    return {"tools": sum(map(len, view)), "tokens": sum(count_tokens(json.dumps(v)) for v in view)}


def listings(trees: list[Tree], wanted: Any, repo: Path, workdir: Path) -> dict[str, Any]:
    routes = [direct()]
    routes += [anchor(level) for level in LEVELS] if wanted(anchor()) else []
    routes += [tooltrim()] if wanted(tooltrim()) else []
    for tree in trees:
        help_text = subprocess.run(
            tree.mcpsqueeze("wrap", "--help"), capture_output=True, text=True, env=tree.env()
        ).stdout
        levels = ("off", *LEVELS) if "--compress-tools" in help_text else ()
        routes += [ours(tree, "--compress-tools", level) for level in levels] or [ours(tree)]
    out = {route.name: listing_tokens(route, repo, workdir) for route in routes}
    plain = out["direct"]["tokens"]
    for figures in out.values():
        figures["vs direct"] = figures["tokens"] - plain
    return out


def run(args: argparse.Namespace, trees: list[Tree], workdir: Path) -> dict[str, Any]:
    words = [w.strip() for w in args.only.split(",")] if args.only else None

    def wanted(route: Route) -> bool:
        return route.available and (
            words is None or route.name == "direct" or any(w in route.name for w in words)
        )

    repo = served_repo(workdir, *([args.rev] if args.rev else []))
    candidates = [direct(), anchor(), tooltrim(), tooltrim(5000), *map(ours, trees)]
    figures: dict[str, Any] = {"not installed": [r.needs for r in candidates if not r.available]}
    if args.listing != "only":
        routes = [r for r in candidates if wanted(r)]
        plain: list[Call] = []
        needs: dict[int, list[ac.Need]] = {}
        for index, route in enumerate(routes):
            with replayed(route, repo, workdir, index) as replay:
                if not plain:
                    plain = replay.calls
                    needs = {c.index: ac.needs_of(c.index, c.text) for c in plain}
                figures[route.name] = measure(route, replay, plain, needs, args.verbose)
            figures[route.name]["vs direct"] = ratio(
                figures[route.name]["tokens"], figures["direct"]["tokens"]
            )
            progress(f"{route.name}: done")
    if args.listing != "no":
        figures["tools/list"] = listings(trees, wanted, repo, workdir)
    return figures
