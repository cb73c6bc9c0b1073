"""grep and search inside a stored original through the doors: `mcpsqueeze wrap` (over each transport)
in front of the demo server shrinks a 60 KB file and a JSON search; `squeeze_recover` with grep
answers the matching lines with their numbers (as `lines` reads them back), pages on with the call in
`_meta["mcpsqueeze/next"]`, and JSON with pointers; `mcpsq recover --grep` prints the same answer."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

from mcpsqueeze._lines import split_lines
from mcpsqueeze.recovery import resolve_pointer
from memwrap import Completed, mcpsq
from rawclient import RawClient, text

NUMBERED = re.compile(r"^(\d+)([:-])(.*)$")


def _shown(answer: str) -> dict[int, tuple[str, str]]:
    """line number -> (mark, text) of each numbered line of a grep answer."""
    out = {}
    for line in answer.split("\n")[1:]:
        match = NUMBERED.match(line)
        if match:
            out[int(match.group(1))] = (match.group(2), match.group(3))
    return out


def _whole(client: RawClient, rid: str) -> str:
    """The original's text, page after page (an answer over the page size comes in pages)."""
    out, arguments = "", {"response_id": rid}
    while arguments:
        page = client.call("squeeze_recover", arguments)
        out += page["content"][0]["text"] if "mcpsqueeze/page" in page.get("_meta", {}) else text(page)
        arguments = page.get("_meta", {}).get("mcpsqueeze/next")
    return out


def _shim(rec: Path, tmp_path: Path, *argv: str) -> Completed:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MCPSQUEEZE_")}
    env |= {"MCPSQUEEZE_RECOVERY_DIR": str(rec), "MCPSQUEEZE_SOCKET": str(tmp_path / "none.sock")}
    return mcpsq(argv, env)


def test_grep_and_search_through_wrap_and_mcpsq_recover(
    tmp_path: Path, wrap_door: Callable[..., AbstractContextManager[RawClient]]
) -> None:
    rec = tmp_path / "rec"
    with wrap_door(["--recovery-dir", str(rec)]) as client:
        client.initialize()
        tools = client.result("tools/list", {})["tools"]
        listed = next(t for t in tools if t["name"] == "squeeze_recover")
        # grep is listed, search named in the description; ignore_case, context and skip are taken
        # unlisted (the answers and errors name them), below
        assert "grep" in listed["inputSchema"]["properties"] and "search" in listed["description"]
        got = client.call("read_file", {"path": "notes.txt"})
        rid = got["_meta"]["truncation"]["response_id"]
        original = _whole(client, rid)
        lines = split_lines(original)
        assert len(original) > len(text(got))

        answer = client.call("squeeze_recover", {"response_id": rid, "grep": "Proxy", "context": 1})
        assert not answer.get("isError")
        wanted = [n for n, line in enumerate(lines, 1) if "Proxy" in line]
        shown = _shown(text(answer))
        assert [n for n, (mark, _) in shown.items() if mark == ":"] == wanted
        for n, (_mark, line) in shown.items():  # every number names that very line, as `lines` reads it
            assert line == lines[n - 1].rstrip("\n")
            assert text(client.call("squeeze_recover", {"response_id": rid, "lines": str(n)})) == lines[n - 1]
        assert answer["_meta"]["mcpsqueeze/search"]["total"] == len(wanted)

        folded = [n for n, line in enumerate(lines, 1) if "proxy" in line.lower()]
        seen: list[int] = []
        arguments: dict[str, Any] | None = {"response_id": rid, "grep": "proxy", "ignore_case": True}
        while arguments is not None:  # page by passing _meta["mcpsqueeze/next"] back as it is
            page = client.call("squeeze_recover", arguments)
            assert len(text(page)) <= 8000
            seen += [n for n, (mark, _) in _shown(text(page)).items() if mark == ":"]
            arguments = page.get("_meta", {}).get("mcpsqueeze/next")
        assert seen == folded and len(folded) > len(wanted)

        ranked = client.call("squeeze_recover", {"response_id": rid, "search": "proxy cache", "context": 0})
        best = _shown(text(ranked))
        assert best and all("proxy" in line.lower() or "cache" in line.lower() for _, line in best.values())

        bad = client.call("squeeze_recover", {"response_id": rid, "grep": r"(a)\1"})
        assert bad.get("isError") and "backreference" in text(bad)

        issues = client.call("search_issues", {"query": "login"})
        jid = issues["_meta"]["truncation"]["response_id"]
        document = json.loads(_whole(client, jid))
        values = client.call("squeeze_recover", {"response_id": jid, "grep": "^DEMO-101[0-9]$"})
        pointers = [line.split(": ", 1)[0] for line in text(values).split("\n")[1:] if line.startswith("/")]
        assert len(pointers) == 10
        assert all(re.match("^DEMO-101[0-9]$", str(resolve_pointer(document, p))) for p in pointers)

    shell = _shim(rec, tmp_path, "recover", rid, "--grep", "Proxy", "--context", "1")
    assert shell.returncode == 0, shell.stderr
    assert shell.stdout.rstrip("\n") == text(answer)
    folded_shell = _shim(rec, tmp_path, "recover", rid, "--grep", "proxy", "-i", "--context", "0")
    assert [n for n, (m, _) in _shown(folded_shell.stdout).items() if m == ":"] == folded[
        : len(_shown(folded_shell.stdout))
    ]
    ranked_shell = _shim(rec, tmp_path, "recover", rid, "--search", "proxy cache", "--context", "0")
    assert ranked_shell.stdout.rstrip("\n") == text(ranked)
    refused = _shim(rec, tmp_path, "recover", rid, "--grep", "a(?=b)")
    assert refused.returncode == 2 and "lookaround" in refused.stderr
