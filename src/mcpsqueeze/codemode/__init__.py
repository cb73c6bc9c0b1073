"""Code Mode: typed Python or TypeScript functions for a session's tools, generated from their schemas
(`render_code_client` is pure; `write_code_client` writes). The code talks to a `mcpsqueeze serve`
session's API (a Unix socket, or loopback TCP with the token read from its file at call time): nothing
secret is written. See docs/code-mode.md.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from .._errors import UsageError
from .._unique import unique
from .._writes import write_ours
from . import _python, _typescript
from ._schema import module_name, tools_of

__all__ = [
    "Endpoint",
    "Language",
    "node_warning",
    "render_code_client",
    "split_listing",
    "write_code_client",
]

Language = Literal["python", "typescript"]


@dataclass(frozen=True)
class Endpoint:
    """Where the generated code finds the session when no MCPSQUEEZE_* variable says otherwise."""

    socket_path: str | None = None
    url: str | None = None  # http://127.0.0.1:PORT
    token_file: str | None = None  # the path only; the token is read when a call is made

    def __post_init__(self) -> None:
        if (self.socket_path is None) == (self.url is None):
            raise UsageError("a Code Mode endpoint is either a Unix socket or a loopback URL")


_LANGUAGES = {"python": _python, "typescript": _typescript}


def render_code_client(
    lang: Language, listings: Mapping[str, list[dict[str, Any]]], endpoint: Endpoint
) -> dict[str, str]:
    """{file name: text}: the runtime and one module per server (tools as in GET /v1/servers)."""
    language = _LANGUAGES.get(lang)
    if language is None:
        raise UsageError(f"unknown Code Mode language {lang!r}; use python or typescript")
    runtime, suffix = language.RUNTIME_MODULE, language.SUFFIX
    where = {"SOCKET": endpoint.socket_path, "URL": endpoint.url, "TOKEN_FILE": endpoint.token_file}
    files = {f"{runtime}.{suffix}": language.runtime(where)}
    names = unique([module_name(s, {runtime}) for s in listings])
    for name, (server, listing) in zip(names, listings.items(), strict=True):
        files[f"{name}.{suffix}"] = language.module(server, tools_of(listing, language.RESERVED))
    return files


def split_listing(servers: list[dict[str, Any]]) -> tuple[dict[str, list[dict[str, Any]]], list[str]]:
    """A `GET /v1/servers` list as ({name: tools} of the servers that are up, [why each other is not]): a
    server that is down must not have its module written, least of all over a good one."""
    up: dict[str, list[dict[str, Any]]] = {}
    down: list[str] = []
    for server in servers:
        name = str(server.get("name"))
        if server.get("status", "up") == "up":
            up[name] = list(server.get("tools") or [])
        else:
            reason = server.get("error") or server.get("status")
            down.append(f"server {name!r} is down ({reason})")
    return up, down


NODE_MIN = (22, 6)  # --experimental-strip-types; type stripping needs no flag from 22.18 and 23.6


def node_warning() -> str | None:
    """A warning when the `node` on PATH cannot run the generated TypeScript (None when it can, or when
    there is no `node` here: the modules may be meant for another machine)."""
    import shutil
    import subprocess

    node = shutil.which("node")
    if node is None:
        return None
    try:
        done = subprocess.run([node, "--version"], capture_output=True, text=True, timeout=10)
        version = tuple(int(part) for part in done.stdout.strip().lstrip("v").split(".")[:2])
    except (OSError, ValueError, subprocess.SubprocessError):
        return None
    if len(version) < 2 or version >= NODE_MIN:
        return None
    return (
        f"the node on PATH ({node}) is v{'.'.join(map(str, version))}; these TypeScript modules need "
        f"Node >= {NODE_MIN[0]}.{NODE_MIN[1]} (`node --experimental-strip-types`, no flag from 22.18), "
        "or compiling with tsc first"
    )


def write_code_client(
    lang: Language,
    directory: Path | str,
    listings: Mapping[str, list[dict[str, Any]]],
    endpoint: Endpoint,
) -> list[Path]:
    """Write the Code Mode files into `directory` (0644, atomically; the paths written). Files not ours are
    never overwritten (UsageError, nothing written)."""
    files = render_code_client(lang, listings, endpoint)
    directory = Path(directory)
    directory.mkdir(mode=0o755, parents=True, exist_ok=True)
    return write_ours(
        [(directory / name, text) for name, text in files.items()],
        0o644,
        (_python.MARKER, _typescript.MARKER),
    )
