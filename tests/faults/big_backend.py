"""A stdio MCP backend that answers with huge one-letter results without holding them: `python
big_backend.py`. Tool `letters` ({"mb": N, "letter": "a"}) returns one text block of N MiB of that letter,
written to stdout in 1 MiB pieces, so the backend itself stays at a few MB whatever N is (the tests
measure our processes, not this one). With `"kind": "words"` the text is varied words instead (counting it takes seconds). Tool `tiny` returns "ok". Stdlib only."""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from stdio_backend import reply, serve

TOOLS = [
    {"name": "letters", "inputSchema": {"type": "object", "properties": {"mb": {"type": "number"}}}},
    {"name": "tiny", "inputSchema": {"type": "object"}},
]
_PIECE = 1 << 20
_WORDS = ["alpha", "beta", "gamma", "delta", "x", "yy", "zeta", "lorem", "ipsum", "42", "Mixed", "tEXT"]


def _call(message: dict[str, Any]) -> None:
    params = message["params"]
    if params["name"] != "letters":
        reply(message["id"], {"content": [{"type": "text", "text": "ok"}]})
        return
    arguments = params.get("arguments") or {}
    size = int(float(arguments.get("mb", 1)) * _PIECE)
    letter = str(arguments.get("letter", "a"))[:1] or "a"
    piece = letter * _PIECE
    if arguments.get("kind") == "words":  # varied text: every span differs, so counting it takes a while
        rng = random.Random(size)
        piece = "".join(rng.choice(_WORDS) + rng.choice(" ,.") for _ in range(_PIECE // 5))[:_PIECE]
    head = json.dumps(
        {"jsonrpc": "2.0", "id": message["id"], "result": {"content": [{"type": "text", "text": ""}]}}
    )
    prefix, suffix = head.split('"text": ""', 1)
    out = sys.stdout
    out.write(prefix + '"text": "')
    while size > 0:
        out.write(piece[: min(size, _PIECE)])
        size -= _PIECE
    out.write('"' + suffix + "\n")
    out.flush()


if __name__ == "__main__":
    serve("big", TOOLS, _call)
