"""The replayed session as each client's model sees it: directly and through ``wrap`` at its defaults,
the agent introducing itself as Claude Code (``claude-code``), as Codex (``codex-mcp-client``) and as a
client we know nothing of (``bench``).

What a model reads is decided here by the client's own rule, not by our profile code: Claude Code and
Codex hand their model the compact JSON of ``structuredContent`` when a result that is not an error has
one, else its text blocks. Per client: the tokens its model sees directly and through us; every answer
the agent got (results and recovery pages) over that client's limit (Claude Code 50,000 characters or
25,000 tokens, Codex 12,000 bytes); the changed results recovered byte for byte; the agent cost of
``agent_cost.py``. With several trees, the unknown client's answers through each are compared with the
first tree's (response ids, recovery paths and token estimates masked).
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path
from typing import Any

from . import agent_cost as ac
from ._harness import Tree, count_tokens, progress, ratio, text_of
from .peers import measure
from .replay import direct, ours, replayed, served_repo

#: The clients, and whether their model reads structuredContent in place of the text.
CLIENTS = {"claude-code": True, "codex-mcp-client": True, "bench": False}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--rev", default=None, help="serve this commit of the repository (default: replay.SERVED)"
    )


def seen(result: dict[str, Any], client: str) -> str:
    structured = result.get("structuredContent")
    if CLIENTS[client] and structured is not None and result.get("isError") is not True:
        return json.dumps(structured, ensure_ascii=False, separators=(",", ":"))
    return text_of(result)


def over_limit(text: str, client: str) -> bool:
    if client == "claude-code":
        return len(text) > 50_000 or count_tokens(text) > 25_000
    return client == "codex-mcp-client" and len(text.encode()) > 12_000


def masked(text: str) -> str:
    """Without what differs between two runs of the same code: ids, recovery paths, token estimates."""
    text = re.sub(r"~?[0-9][0-9,]* tokens", "N tokens", re.sub(r"[0-9a-f]{32}", "ID", text))
    return re.sub(r"/[^\s\"']*recovery-[^/\s\"']*/", "/REC/", text)


def run(args: argparse.Namespace, trees: list[Tree], workdir: Path) -> dict[str, Any]:
    repo = served_repo(workdir, *([args.rev] if args.rev else []))
    with replayed(direct(), repo, workdir, 0) as replay:
        plain = replay.calls
    needs = {c.index: ac.needs_of(c.index, c.text) for c in plain}
    figures: dict[str, Any] = {}
    unknown: list[str] = []
    index = 0
    for tree in trees:
        for client in CLIENTS:
            index += 1
            route = ours(tree)
            with replayed(route, repo, workdir, index, client=client) as replay:
                # a result the model reads as it would without us counts as unchanged (the direct text)
                for call in replay.calls:
                    text = seen(call.result, client)
                    unchanged = text == seen(plain[call.index].result, client)
                    call.text = plain[call.index].text if unchanged else text
                found = measure(route, replay, plain, needs, verbose=False)
                answers = [result for peer in replay.peers.values() for _, result in peer.calls]
                results = [c.result for c in replay.calls]
            over = sum(over_limit(seen(r, client), client) for r in answers)
            before = sum(count_tokens(seen(c.result, client)) for c in plain)
            after = sum(count_tokens(seen(r, client)) for r in results)
            row = {
                "direct tokens": before,
                "tokens": after,
                "vs direct": ratio(after, before),
                "answers over the client's limit": f"{over} of {len(answers)}",
                "recovered byte for byte": found["recovered byte for byte"],
                "agent cost": {k: v["cost"] for k, v in found["agent cost"].items()},
            }
            if client == "bench":
                texts = [masked(text_of(r)) for r in results]
                unknown = unknown or texts
                row["answers as the first tree's"] = (
                    f"{sum(a == b for a, b in zip(texts, unknown, strict=True))}/39"
                )
            figures[f"{client} ({tree.label})"] = row
            progress(f"{client} through {tree.label}: done")
    return figures
