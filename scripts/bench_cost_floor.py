"""Issue 21's agent cost in process, fast, and the floor previews alone can reach on the replay.

``bench_peers.py`` prices the agent's needs against running proxies (about a minute for ours and a
baseline). This script replays the same session's DIRECT results (captured once from the real
servers, or read back with ``--direct FILE``) through ``mcpsqueeze.Squeezer`` in process, and applies
the same model (``_agent_cost.py``: the same needs, seed and pricing, several ranges or pointers per
call, pages followed), so a change to the previews can be weighed in seconds; its figures match the
bench's within about 20 tokens (response ids are random hex). Printed:

- **ours**: the agent's cost at K=1 and K=3 at the default settings, per changed result with
  ``--verbose``;
- **floor**: previews of landmarks alone (no support text, no inner landmarks, no first sentences,
  no fill), and for each changed result whichever of that preview or the whole result costs less for
  the needs actually drawn (an oracle no proxy has). Nothing that keeps every landmark visible and
  prices each result's hidden needs when they arise costs less on this replay.

``--against K1,K3`` (the baseline's costs from a ``bench_peers.py --baseline`` run) prints the ratios.

    python scripts/bench_cost_floor.py [--direct FILE] [--save FILE] [--against 46232,66219] [--verbose]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import _agent_cost as ac
import bench_session as bs
from bench_peers import SERVED
from bench_session import presented_text
from mcpsqueeze.accounting._tokens import count_tokens
from mcpsqueeze.api import Squeezer

PAGE_SIZE = 40_000  # the MCP doors' default page of a recover answer


def capture() -> list[dict[str, Any]]:
    """The replayed session's direct results: ``{"server", "tool", "arguments", "result"}`` per call."""
    workdir = Path(tempfile.mkdtemp(prefix="bench-peers-"))
    try:
        repo = bs._repo(workdir)
        subprocess.run(["git", "-C", str(repo), "checkout", "-q", "-B", "bench", SERVED], check=True)
        peers = {
            s.name: bs.Peer(list(s.argv), {**bs._env(), **s.env}, workdir)
            for s in bs.servers(repo, workdir, 0)
        }
        try:
            for peer in peers.values():
                peer.send_initialize()
            for peer in peers.values():
                peer.initialize(sent=True)
            out = []
            for server, tool, arguments in bs.session(repo):
                _, answer = peers[server].request("tools/call", {"name": tool, "arguments": arguments})
                out.append(
                    {"server": server, "tool": tool, "arguments": arguments, "result": answer.get("result")}
                )
            return out
        finally:
            for peer in peers.values():
                peer.close()
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


@dataclass
class Fetch:
    text: str  # what the agent read
    tokens: int
    trips: int
    nodes: list[ac.Path]
    asked: str

    @property
    def price(self) -> int:
        return self.tokens + (ac.OVERHEAD + ac.TURN) * self.trips


@dataclass
class Costs:
    preview: int
    cost: dict[int, int] = field(default_factory=dict)  # K -> cost
    trips: dict[int, int] = field(default_factory=dict)
    per: dict[int, dict[int, int]] = field(default_factory=dict)  # K -> call -> its preview + recoveries
    log: dict[int, list[str]] = field(default_factory=dict)


class Replay:
    def __init__(self, calls: list[dict[str, Any]]) -> None:
        self.calls = calls
        self.direct = [presented_text(c["result"] or {}) for c in calls]
        self.needs = {i: ac.needs_of(i, t) for i, t in enumerate(self.direct)}
        self.same = {i: tuple(j for j in range(i) if self.direct[j] == t) for i, t in enumerate(self.direct)}
        self.documents = {i: ac.json_document(t) for i, t in enumerate(self.direct)}

    def run(self) -> Costs:
        squeezer = Squeezer(20000)
        shown: list[str] = []
        metas: list[dict[str, Any]] = []

        async def present() -> None:
            for c in self.calls:
                result = await squeezer.present(c["server"], c["tool"], c["arguments"], c["result"])
                shown.append(presented_text(result))
                metas.append(result.get("_meta") or {})

        asyncio.run(present())
        out = Costs(sum(map(count_tokens, shown)))
        changed = [i for i, text in enumerate(shown) if text != self.direct[i]]
        wholes: dict[str, Fetch] = {}
        for k in ac.KS:
            per = {i: count_tokens(shown[i]) for i in changed}
            context = ac.Context()
            tokens = trips = 0
            log: list[str] = []
            for i, text in enumerate(shown):
                context.add(text)
                if i not in changed:
                    continue
                unseen = [
                    n for n in self.needs[i][:k] if not context.sees(n, self.documents[i], self.same[i])
                ]
                if not unseen:
                    continue
                fetches = self._fetches(squeezer, i, shown, metas, unseen, wholes)
                for f in fetches:
                    trips += f.trips
                    tokens += f.tokens + ac.OVERHEAD * f.trips
                    per[i] += f.price
                    context.add(f.text)
                    for path in f.nodes:
                        context.add_node(i, path)
                head = f"#{i:<2} {self.calls[i]['tool']:<20} preview {count_tokens(shown[i]):>5}"
                asked = "; ".join(f"{f.asked} {f.tokens:,} tokens" for f in fetches)
                log.append(f"{head}, {len(unseen)} hidden: {asked}")
            out.cost[k] = out.preview + tokens + ac.TURN * trips
            out.trips[k] = trips
            out.per[k] = per
            out.log[k] = log
        return out

    def _fetches(
        self,
        squeezer: Squeezer,
        i: int,
        shown: list[str],
        metas: list[dict[str, Any]],
        unseen: list[ac.Need],
        wholes: dict[str, Fetch],
    ) -> list[Fetch]:
        """The cheapest exact calls for ``unseen``, as bench_peers' ``_Agent._ours`` prices them."""
        response_id = (metas[i].get("truncation") or {}).get("response_id")
        assert isinstance(response_id, str)
        dedup = metas[i].get("mcpsqueeze/dedup")
        marks = shown[i]
        if isinstance(dedup, dict) and isinstance(dedup.get("same_as_call"), int):
            marks = shown[dedup["same_as_call"] - 1]  # the squeezer numbers every call of the session
        folds, nodes, whole = ac.parts_for(unseen, marks, self.documents[i])
        if response_id not in wholes:
            wholes[response_id] = _ask(squeezer, {"response_id": response_id}, [()], "whole")
        everything = wholes[response_id]
        if whole:
            return [everything]
        if folds:
            spec = ",".join(f"{a}-{b}" for a, b in sorted(folds))
            part = _ask(squeezer, {"response_id": response_id, "lines": spec}, [], f"lines {spec}")
        else:
            kept = ac.outermost(nodes)
            pointers = [ac.pointer_of(p) for p in kept]
            arguments = {
                "response_id": response_id,
                "pointer": pointers if len(pointers) > 1 else pointers[0],
            }
            part = _ask(squeezer, arguments, kept, f"pointer {pointers}")
        return [everything] if everything.price < part.price else [part]


def _ask(squeezer: Squeezer, arguments: dict[str, Any], nodes: list[ac.Path], asked: str) -> Fetch:
    """A recovery read to its last page (``_meta["mcpsqueeze/next"]``), as an agent reads it."""
    exact: list[str] = []
    notes: list[str] = []
    tokens = trips = 0
    while True:
        answer = squeezer.answer_recover(arguments, PAGE_SIZE)
        tokens += count_tokens(presented_text(answer))
        trips += 1
        meta = answer.get("_meta") or {}
        blocks = [b["text"] for b in answer.get("content") or [] if b.get("type") == "text"]
        if isinstance(meta.get("mcpsqueeze/page"), dict):
            exact.append(blocks[0])
            notes += blocks[1:]
        else:
            exact.append(presented_text(answer))
        following = meta.get("mcpsqueeze/next")
        if not isinstance(following, dict):
            break
        arguments = following
    return Fetch("\n".join(["".join(exact), *notes]), tokens, trips, nodes, asked)


@contextmanager
def landmarks_only() -> Iterator[None]:
    """Outlines of landmarks alone: the plan's first tier, no inner landmarks, no support, no fill."""
    import mcpsqueeze.shrink._engine as engine
    import mcpsqueeze.shrink._outline as outline
    import mcpsqueeze.shrink._value as value

    plan_for = outline.plan_for

    def bare(fmt: Any, lines: Sequence[str], ranked: Sequence[int], text: str | None = None) -> Any:
        plan = plan_for(fmt, lines, ranked, text)
        if plan.landmarks:
            plan.tiers, plan.inner, plan.fill = [plan.tiers[0]], [], []
        return plan

    saved = (outline.plan_for, value.SUPPORT_CHARS, engine.SOFT_CHARS)
    outline.plan_for, value.SUPPORT_CHARS, engine.SOFT_CHARS = bare, 0, 0
    try:
        yield
    finally:
        outline.plan_for, value.SUPPORT_CHARS, engine.SOFT_CHARS = saved


def _oracle(replay: Replay, costs: Costs, k: int) -> int:
    """The session's cost when each changed result is shown as ``costs`` shows it or whole, whichever
    costs less for the needs drawn."""
    unchanged = sum(count_tokens(t) for i, t in enumerate(replay.direct) if i not in costs.per[k])
    return unchanged + sum(min(c, count_tokens(replay.direct[i])) for i, c in costs.per[k].items())


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--direct", type=Path, help="the direct results saved by --save (skip the servers)")
    parser.add_argument("--save", type=Path, help="save the captured direct results here")
    parser.add_argument("--against", help="the baseline's K=1,K=3 costs, for ratios (e.g. 46232,66219)")
    parser.add_argument("--verbose", action="store_true", help="what each changed result cost")
    args = parser.parse_args(argv)
    calls = json.loads(args.direct.read_text())["calls"] if args.direct else capture()
    if args.save:
        args.save.write_text(json.dumps({"calls": calls}))
    replay = Replay(calls)
    against = [int(x) for x in args.against.split(",")] if args.against else None
    rows: list[tuple[str, Callable[[int], int], Costs]] = []
    ours = replay.run()
    rows.append(("ours (defaults)", lambda k: ours.cost[k], ours))
    with landmarks_only():
        bare = replay.run()
    rows.append(("landmarks alone", lambda k: bare.cost[k], bare))
    rows.append(("floor: landmarks alone or whole", lambda k: _oracle(replay, bare, k), bare))
    for name, cost, found in rows:
        line = f"{name:<34} preview {found.preview:>7,}"
        for n, k in enumerate(ac.KS):
            ratio = f" ({cost(k) / against[n]:.3f}x)" if against else ""
            line += f" | K={k}: cost {cost(k):>7,}{ratio}"
        print(line)
    if args.verbose:
        for k in ac.KS:
            print(f"ours, K={k}: {ours.trips[k]} round trips", file=sys.stderr)
            for entry in ours.log[k]:
                print("   ", entry, file=sys.stderr)


if __name__ == "__main__":
    main()
