"""The replayed coding session as each client's model sees it.

Replays the 39-call session of ``bench_session.py`` (its ``session()`` and servers: npm
``server-filesystem`` and ``server-memory``, PyPI ``mcp-server-git``, over a copy of this repository)
directly and through ``mcpsqueeze wrap`` at its defaults, the replaying agent introducing itself as
Claude Code (``claude-code``), as Codex (``codex-mcp-client``) and as a client we know nothing of
(``bench``), and counts what that client's model reads of every answer, independently of our own
profile code: the compact JSON of ``structuredContent`` when a result that is not an error has one,
else its text blocks (what Claude Code 2.1 and Codex 0.171 hand their model; docs/clients.md).

Printed per client: o200k tokens the model sees, directly and through us (target: at most 0.28x);
every answer the agent got (tool results and recover pages) over that client's limit (Claude Code:
50,000 characters or 25,000 tokens; Codex: 12,000 bytes; targets: none); the changed results recovered
byte for byte (every one, following the pages); and the agent-cost model of ``_agent_cost.py`` (K
needs drawn per changed result, each recovered the cheapest exact way; cost = tokens to see + 1,000 x
round trips). With ``--baseline COMMIT``, the unknown client's answers through that commit's
mcpsqueeze too, compared with ours (response ids, recovery paths and token estimates masked): they are
the same.

    python scripts/bench_clients.py [--rev COMMIT] [--baseline COMMIT] [--json OUT] [--verbose]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import _agent_cost as ac
import bench_peers as bp
import bench_session as bs
from bench_session import CallRecord, Configuration, Peer

#: The clients replayed, and whether their model reads structuredContent in place of the text.
CLIENTS = {"claude-code": True, "codex-mcp-client": True, "bench": False}
UNKNOWN = "bench"
TARGET_RATIO = 0.28


def seen(result: dict[str, Any], client: str) -> str:
    """What ``client``'s model reads of ``result``."""
    structured = result.get("structuredContent")
    if CLIENTS[client] and structured is not None and result.get("isError") is not True:
        return json.dumps(structured, ensure_ascii=False, separators=(",", ":"))
    return bs.presented_text(result)


def over_limit(text: str, client: str) -> str | None:
    """Why ``text`` is more than ``client`` keeps whole, or None."""
    if client == "claude-code":
        if len(text) > 50_000:
            return f"{len(text):,} characters"
        tokens = bp.count_tokens(text)
        return f"{tokens:,} tokens" if tokens > 25_000 else None
    if client == "codex-mcp-client":
        size = len(text.encode())
        return f"{size:,} bytes" if size > 12_000 else None
    return None


# -- every answer the agent got, per configuration ---------------------------------------------------

_ANSWERS: dict[str, list[tuple[str, dict[str, Any]]]] = {}
_current = [""]
_request = Peer.request


def _logged(self: Peer, method: str, params: dict[str, Any]) -> tuple[float, dict[str, Any]]:
    took, answer = _request(self, method, params)
    if method == "tools/call":
        _ANSWERS.setdefault(_current[0], []).append((str(params.get("name")), answer.get("result") or {}))
    return took, answer


Peer.request = _logged  # type: ignore[method-assign]


# -- one client --------------------------------------------------------------------------------------


@dataclass
class ClientFigures:
    client: str
    direct_tokens: int
    ours_tokens: int
    answers: int = 0
    over: list[str] = field(default_factory=list)
    changed: int = 0
    recovered: int = 0
    costs: dict[int, dict[str, int]] = field(default_factory=dict)
    same_as_baseline: str = "-"
    baseline_tokens: int = 0  # what the model sees through --baseline's mcpsqueeze (0: not run)
    baseline_over: int = 0  # its tool results over the client's limit
    log: list[str] = field(default_factory=list)  # the agent-cost model's line per result with needs

    @property
    def ratio(self) -> float:
        return self.ours_tokens / self.direct_tokens if self.direct_tokens else 0.0


def _viewed(calls: list[CallRecord], direct: list[CallRecord], client: str) -> list[CallRecord]:
    """The records with the text the client's model reads; a result it reads as it would without us
    keeps the direct text, so that it counts as unchanged (only changed results are recovered)."""
    out = []
    for call in calls:
        text = seen(call.result, client)
        unchanged = text == seen(direct[call.index].result, client)
        out.append(dataclasses.replace(call, text=direct[call.index].text if unchanged else text))
    return out


def run_client(
    client: str,
    index: int,
    direct: list[CallRecord],
    needs: dict[int, list[ac.Need]],
    repo: Path,
    workdir: Path,
    src: Path | None = None,
) -> tuple[ClientFigures, list[CallRecord]]:
    name = f"mcpsqueeze wrap as {client}" + (" (baseline)" if src is not None else "")
    slug = re.sub(r"[^a-z0-9]+", "-", client)
    config = Configuration(name, bp._ours_at(src, slug), client=client)
    sess = bs.session(repo)
    after = bp._recoverer(name, direct, sess, needs)

    def after_viewed(peers: dict[str, Peer], calls: list[CallRecord]) -> None:
        after(peers, _viewed(calls, direct, client))

    _current[0] = name
    run = bs.run_session(config, index, 0, repo, workdir, after_viewed if src is None else None)
    calls = _viewed(run.calls, direct, client)
    figures = ClientFigures(
        client,
        sum(bp.count_tokens(seen(c.result, client)) for c in direct),
        sum(bp.count_tokens(seen(c.result, client)) for c in run.calls),
    )
    answers = _ANSWERS.get(name, [])
    figures.answers = len(answers)
    for tool, result in answers:
        why = over_limit(seen(result, client), client)
        if why is not None:
            figures.over.append(f"{tool}: {why}")
    if src is None:
        recovered: dict[int, bool] = after.recovered  # type: ignore[attr-defined]
        figures.changed = len(recovered)
        figures.recovered = sum(recovered.values())
        for k, cost in after.costs.items():  # type: ignore[attr-defined]
            cost.preview = figures.ours_tokens
            figures.costs[k] = {"to_see": cost.to_see, "trips": cost.trips, "cost": cost.cost}
            figures.log += [f"K={k} {line}" for line in cost.log]
    return figures, calls


_ID = re.compile(r"[0-9a-f]{32}")
_ESTIMATE = re.compile(r"~?[0-9][0-9,]* tokens")
_RECOVERY_DIR = re.compile(r"/[^\s\"']*recovery-[^/\s\"']*/")


def masked(text: str) -> str:
    """A result's text without what differs between two runs of the same code: response ids, the
    recovery directory, and token figures a pointer estimates while counting is still under way."""
    return _RECOVERY_DIR.sub("/REC/", _ESTIMATE.sub("N tokens", _ID.sub("ID", text)))


def report(results: list[ClientFigures]) -> None:
    print("\n== what the client's model sees: the replayed session (o200k tokens)")
    print(
        f"{'client':<18} {'direct':>8} {'ours':>8} {'ratio':>6} {'answers':>7} {'over limit':>10} "
        f"{'recovered':>9} {'K=1 cost':>9} {'K=3 cost':>9}  unknown client as the baseline"
    )
    for f in results:
        costs = [f"{f.costs[k]['cost']:,}" if k in f.costs else "-" for k in ac.KS]
        print(
            f"{f.client:<18} {f.direct_tokens:>8,} {f.ours_tokens:>8,} {f.ratio:>5.2f}x {f.answers:>7} "
            f"{len(f.over):>10} {f.recovered:>4}/{f.changed:<4} {costs[0]:>9} {costs[1]:>9}  "
            + f.same_as_baseline
        )
        for why in f.over:
            print(f"    over: {why}")
        if f.baseline_tokens:
            ratio = f.baseline_tokens / f.direct_tokens
            over = f"{f.baseline_over} over limit"
            print(f"    through the baseline: {f.baseline_tokens:,} ({ratio:.2f}x), {over}")
    print("\n== targets")
    for f in results:
        if f.client == UNKNOWN:
            continue
        rows = [
            (f"{f.client}: tokens seen <= {TARGET_RATIO}x direct", f"{f.ratio:.3f}", f.ratio <= TARGET_RATIO),
            (f"{f.client}: answers over its limit = 0", str(len(f.over)), not f.over),
            (f"{f.client}: changed results recovered byte for byte", f"{f.recovered}/{f.changed}",
             f.recovered == f.changed),
        ]  # fmt: skip
        for label, value, met in rows:
            print(f"  {label:<56} {value:<10} {'met' if met else 'NOT met'}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rev", default=bp.SERVED, help=f"serve this commit of the repository ({bp.SERVED})")
    parser.add_argument(
        "--baseline", metavar="COMMIT", help="also run that commit's mcpsqueeze as an unknown client"
    )
    parser.add_argument("--json", type=Path, help="write the figures here")
    parser.add_argument("--verbose", action="store_true", help="one line per call and client")
    args = parser.parse_args(argv)
    workdir = Path(tempfile.mkdtemp(prefix="bench-clients-"))
    results: list[ClientFigures] = []
    try:
        repo = bs._repo(workdir)
        subprocess.run(["git", "-C", str(repo), "checkout", "-q", "-B", "bench", args.rev], check=True)
        baseline = bp.baseline_tree(args.baseline, workdir) if args.baseline else None
        _current[0] = "direct"
        plain = Configuration("direct", lambda s, _w: list(s.argv))
        direct = bs.run_session(plain, 0, 0, repo, workdir).calls
        needs = {c.index: ac.needs_of(c.index, c.text) for c in direct}
        print("direct: done", file=sys.stderr)
        unknown: list[CallRecord] = []
        for index, client in enumerate(CLIENTS, 1):
            figures, calls = run_client(client, index, direct, needs, repo, workdir)
            results.append(figures)
            if client == UNKNOWN:
                unknown = calls
            if args.verbose:
                _verbose(client, direct, calls)
                for line in figures.log:
                    print(f"  {client[:12]:<12} {line}", file=sys.stderr)
            print(f"{client}: done", file=sys.stderr)
        if baseline is not None:
            for index, f in enumerate(results, len(CLIENTS) + 1):
                old, theirs = run_client(f.client, index, direct, needs, repo, workdir, baseline[1])
                f.baseline_tokens, f.baseline_over = old.ours_tokens, len(old.over)
                if f.client == UNKNOWN:
                    same = sum(masked(a.text) == masked(b.text) for a, b in zip(unknown, theirs, strict=True))
                    f.same_as_baseline = f"{same}/{len(unknown)} answers the same as {baseline[0]}'s"
                print(f"{f.client} through {baseline[0]}: done", file=sys.stderr)
        report(results)
        if args.json:
            args.json.write_text(json.dumps([dataclasses.asdict(f) for f in results], indent=1))
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def _verbose(client: str, direct: list[CallRecord], calls: list[CallRecord]) -> None:
    count: Callable[[str], int] = bp.count_tokens
    for d, c in zip(direct, calls, strict=True):
        print(
            f"  {client[:12]:<12} #{c.index:<2} {c.tool:<24} {count(seen(d.result, client)):>7} -> "
            f"{count(c.text):>6}  {bp._kind(c.meta) if c.text != d.text else 'unchanged'}",
            file=sys.stderr,
        )


if __name__ == "__main__":
    main()
