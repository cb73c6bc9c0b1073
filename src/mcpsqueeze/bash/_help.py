"""Every help text of the shell door: the listing, a server's tools, a tool's flags. Pure, pinned by golden
files; ``prefix`` is what the user types before the server's name.
"""

from __future__ import annotations

from ._catalog import Catalog, ServerInfo, ToolInfo
from ._fastjson import dumps
from ._flags import BOUNDS, Flag

__all__ = [
    "EXIT_CODES",
    "first_sentence",
    "render_listing",
    "render_server",
    "render_tool_help",
    "render_usage",
]

WIDTH = 100
EXIT_CODES = (
    "Exit codes: 0 ok, 1 the tool reported an error (its text on stderr), 2 usage error,\n"
    "3 session unreachable, 4 backend failure or timeout."
)
_FLAG_COLUMN = 30
#: The end of every tool's help: the shim's own flags and what it prints.
_EVERY_TOOL = """\
Every tool also takes:
  --json JSON|-                 the whole input as one JSON object ('-' reads it from stdin); flags
                                given too override its keys
  --full                        the kept original of this same call, without running it; when none
                                is kept, only a read-only or idempotent tool runs again (unshrunk)
  --raw                         print the whole result (content, structuredContent, _meta, isError)
                                as JSON
  -h, --help                    show this help

Output: the result text on stdout, exactly (nothing added; a terminal gets a final newline); a
shrink notice (with the response id and the recovery file) and errors on stderr.
"""


def first_sentence(text: str, limit: int) -> str:
    """The first sentence (or line) of a description, cut to ``limit`` characters with '...'."""
    text = " ".join(text.strip().split("\n\n", 1)[0].split())
    for end in (". ", "? ", "! "):
        cut = text.find(end)
        if cut != -1:
            text = text[: cut + 1]
    if len(text) > limit:
        text = text[: max(0, limit - 3)].rstrip() + "..."
    return text


def _names(server: ServerInfo) -> list[str]:
    return [f"{server.name} {t.command}" for t in server.tools] if server.up else []


def _column(servers: list[ServerInfo]) -> int:
    """Where descriptions start: after the longest `SERVER TOOL` of every server listed (at most 40)."""
    return min(max((len(name) for server in servers for name in _names(server)), default=0), 40)


def _tool_lines(server: ServerInfo, pad: int) -> list[str]:
    if not server.up:
        reason = f": {server.error}" if server.error else ""
        return [
            f"{server.name}  (down{reason}; restart `mcpsqueeze serve` "
            "or fix this server's entry in its config)"
        ]
    if not server.tools:
        return [f"{server.name}  (no tools)"]
    lines = []
    for name, tool in zip(_names(server), server.tools, strict=True):
        about = tool.description or tool.title
        room = WIDTH - max(pad, len(name)) - 2
        lines.append(f"{name.ljust(pad)}  {first_sentence(about, room)}".rstrip())
    return lines


def _usage_lines(prefix: str) -> list[str]:
    head = [
        f"Usage: {prefix}SERVER TOOL [--flag value ...]   call a tool; the result goes to stdout",
        f"       {prefix}SERVER TOOL --help               the tool's flags",
    ]
    if prefix:
        head += [
            f"       {prefix}SERVER --help                    one server's tools",
            f"       {prefix}recover ID|PATH [--pointer P]    print a shrunk result's original",
        ]
    return head


def render_usage(reason: str, prefix: str = "mcpsq ") -> str:
    """``mcpsq --help`` when no session answers: how to call, and why no tools can be listed."""
    lines = [*_usage_lines(prefix), "", "No tools to list: " + reason.strip(), "", EXIT_CODES]
    return "\n".join(lines) + "\n"


def render_listing(listing: Catalog, prefix: str = "mcpsq ") -> str:
    """``mcpsq`` / ``mcpsq --help``: how to call, then every server's tools, one line each."""
    lines = [*_usage_lines(prefix), ""]
    if listing.servers:
        lines.append("Tools (SERVER TOOL  description):")
        pad = _column(listing.servers)  # one column for every server: the listing reads as one table
        for server in listing.servers:
            lines.extend(_tool_lines(server, pad))
    else:
        lines.append(
            "The session serves no backend servers; start `mcpsqueeze serve` with --config or -n NAME."
        )
    lines += ["", EXIT_CODES]
    return "\n".join(lines) + "\n"


def render_server(server: ServerInfo, prefix: str = "mcpsq ") -> str:
    """``mcpsq SERVER --help`` (or ``github --help``): that server's tools, one line each."""
    lines = [
        f"Usage: {prefix}{server.name} TOOL [--flag value ...]   call a tool",
        f"       {prefix}{server.name} TOOL --help               the tool's flags",
        "",
        f"Tools of {server.name}:",
        *_tool_lines(server, _column([server])),
        "",
        EXIT_CODES,
    ]
    return "\n".join(lines) + "\n"


def _value_text(value: object) -> str:
    return value if isinstance(value, str) else dumps(value, ensure_ascii=False)


def _plural_label(item: Flag) -> str:
    if item.enum is not None:
        return item.metavar
    return {
        "string": "strings",
        "integer": "integers",
        "number": "numbers",
        "boolean": "true/false",
        "object": "JSON objects",
        "array": "arrays",
    }.get(item.kind, "values")


def _flag_left(flag: Flag) -> str:
    if flag.kind == "boolean" and flag.enum is None:
        return f"--{flag.name}, --no-{flag.name}"
    return f"--{flag.name} {flag.metavar}"


def _flag_notes(flag: Flag) -> list[str]:
    notes: list[str] = []
    if flag.description:
        notes.append(" ".join(flag.description.split()))
    kind_note = ""
    if flag.kind == "array":
        assert flag.item is not None
        kind_note = f"repeat the flag, or pass one JSON array of {_plural_label(flag.item)}"
    elif flag.kind == "object":
        kind_note = "a JSON object"
    elif flag.kind == "any":
        kind_note = "JSON, or plain text"
    if flag.nullable and flag.kind != "string":
        kind_note = f"{kind_note}, or null" if kind_note else "or null"
    if kind_note:
        notes.append(kind_note)
    for key, word in BOUNDS:
        if isinstance(flag.schema.get(key), (int, float)):
            notes.append(f"{word} {flag.schema[key]}")
    if "default" in flag.schema:
        notes.append(f"default: {_value_text(flag.schema['default'])}")
    return notes


def _wrap(left: str, notes: list[str]) -> list[str]:
    import textwrap  # help only: keep the shim's call path small

    text = "; ".join(notes)
    indent = " " * (2 + _FLAG_COLUMN)
    if not text:
        return [f"  {left}"]
    body = textwrap.wrap(text, WIDTH - len(indent)) or [""]
    if len(left) + 2 <= _FLAG_COLUMN - 1:
        first = f"  {left.ljust(_FLAG_COLUMN)}{body[0]}"
        rest = body[1:]
    else:
        first = f"  {left}"
        rest = body
    return [first, *(indent + line for line in rest)]


def render_tool_help(server: str, tool: ToolInfo, prefix: str = "mcpsq ") -> str:
    """``mcpsq SERVER TOOL --help``: usage, description, required and optional flags, exit codes."""
    prog = f"{prefix}{server} {tool.command}"
    required = [f for f in tool.flags if f.required]
    optional = [f for f in tool.flags if not f.required]
    usage = [prog]
    for flag in required:
        usage.append(
            f"--{flag.name} true|false" if flag.kind == "boolean" else f"--{flag.name} {flag.metavar}"
        )
    if optional:
        usage.append("[flags]")
    lines = [f"Usage: {' '.join(usage)}", ""]
    description = tool.description.strip() or tool.title or "(no description)"
    lines += description.splitlines()
    named = f"MCP tool {tool.name!r} on server {server!r}"
    lines += ["", f"({named}{'; ' + tool.title if tool.title and tool.description else ''})", ""]
    if not tool.flags:
        lines += ["This tool takes no flags.", ""]
    for title, group in (("Required flags:", required), ("Optional flags:", optional)):
        if group:
            lines.append(title)
            for flag in group:
                lines += _wrap(_flag_left(flag), _flag_notes(flag))
            lines.append("")
    lines.append(_EVERY_TOOL + EXIT_CODES)
    return "\n".join(lines) + "\n"
