"""The direct-versus-proxied parity fixture (as sparfenyuk/mcp-proxy has): one set of scenarios, run
once straight against a backend and once through `mcpsqueeze wrap`, whose answers must be identical
except for the documented changes.

Documented changes: `tools/list` gains the recover tool, last; nothing else in a small exchange
differs (small results are below every budget, listings and errors pass untouched).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rawclient import RawClient, cli, demo_server, node_paths

__all__ = ["CASES", "ParityCase", "assert_parity", "exchange", "run_parity"]

RECOVER_TOOL = "squeeze_recover"
LISTINGS = ("tools/list", "prompts/list", "resources/list", "resources/templates/list", "ping")


@dataclass(frozen=True)
class ParityCase:
    """A backend (argv, found at run time; None: not installed here) and the small calls to compare.

    ``requests``: further (method, params) to compare after the listings, e.g. resources/read."""

    name: str
    argv: Callable[[], list[str] | None]
    calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    requests: list[tuple[str, dict[str, Any]]] = field(default_factory=list)


def _node(key: str, *extra: str) -> Callable[[], list[str] | None]:
    def argv() -> list[str] | None:
        paths = node_paths()
        if "NODE22" not in paths or key not in paths:
            return None
        return [paths["NODE22"], paths[key], *extra]

    return argv


def _pyserver(name: str) -> Callable[[], list[str] | None]:
    def argv() -> list[str] | None:
        path = Path(node_paths().get("PY_SERVERS_BIN", "/nonexistent")) / name
        return [str(path)] if os.access(path, os.X_OK) else None

    return argv


CASES = [
    ParityCase(
        "demo",
        demo_server,
        [("echo", {"text": "hello"}), ("add", {"a": 2, "b": 3}), ("fail", {"message": "no"}), ("nope", {})],
    ),
    ParityCase(
        "everything",
        _node("EVERYTHING_JS", "stdio"),
        [
            ("echo", {"message": "hello"}),
            ("get-sum", {"a": 2, "b": 3}),
            ("get-structured-content", {"location": "New York"}),
            ("get-tiny-image", {}),
            ("get-annotated-message", {"messageType": "error", "includeImage": True}),
            ("no-such-tool", {}),
        ],
        [
            ("resources/read", {"uri": "demo://resource/static/document/architecture.md"}),
            ("prompts/get", {"name": "simple-prompt"}),
        ],
    ),
    ParityCase("memory", _node("MEMORY_JS"), [("search_nodes", {"query": "zz-parity-none"})]),
    ParityCase(
        "time",
        _pyserver("mcp-server-time"),
        [("convert_time", {"source_timezone": "UTC", "time": "12:00", "target_timezone": "Asia/Tokyo"})],
    ),
]


def exchange(client: RawClient, case: ParityCase) -> dict[str, Any]:
    """initialize, every listing, then the case's calls; each answer whole (result or error), minus its id."""
    out: dict[str, Any] = {"initialize": client.initialize()}
    for method in LISTINGS:
        out[method] = {k: v for k, v in client.request(method).items() if k != "id"}
    for method, params in case.requests:
        out[f"{method} {params}"] = {k: v for k, v in client.request(method, params).items() if k != "id"}
    for number, (tool, arguments) in enumerate(case.calls):
        answer = client.request("tools/call", {"name": tool, "arguments": arguments})
        out[f"call {number} {tool}"] = {k: v for k, v in answer.items() if k != "id"}
    return out


def assert_parity(direct: dict[str, Any], proxied: dict[str, Any]) -> None:
    """Identical answers, except the recover tool appended to tools/list (exactly once, last)."""
    tools = proxied["tools/list"]["result"]["tools"]
    assert tools[-1]["name"] == RECOVER_TOOL and [t["name"] for t in tools].count(RECOVER_TOOL) == 1
    proxied = {**proxied, "tools/list": {**proxied["tools/list"]}}
    proxied["tools/list"]["result"] = {**proxied["tools/list"]["result"], "tools": tools[:-1]}
    assert proxied.keys() == direct.keys()
    for key in direct:
        assert proxied[key] == direct[key], key


def run_parity(case: ParityCase, argv: list[str], recovery_dir: Path, *wrap_flags: str) -> tuple[int, str]:
    """Run the case directly and through wrap, assert parity; the proxy's exit code and stderr."""
    with RawClient(argv) as client:
        direct = exchange(client, case)
    wrapped = cli("wrap", "--recovery-dir", str(recovery_dir), *wrap_flags, "--", *argv)
    with RawClient(wrapped) as client:
        proxied = exchange(client, case)
        code = client.close()
    assert_parity(direct, proxied)
    return code, client.stderr
