"""The transport-free heart of the shell door: argv -> what to do (``plan``: help, a usage error, a tool call
or a recovery), and answers -> what to print (stdout, stderr, exit code). The shim, the entry points and
the Just-Bash commands are glue around it, so all print the same bytes and exit the same way. Stdlib-only.
"""

from __future__ import annotations

import posixpath

from mcpsqueeze._errors import (
    EXIT_BACKEND,
    EXIT_OK,
    EXIT_TOOL_ERROR,
    EXIT_UNREACHABLE,
    EXIT_USAGE,
    BackendError,
    MCPSqueezeError,
    RecoveryError,
    UsageError,
)

from ._catalog import Catalog, ServerInfo
from ._fastjson import dumps
from ._flags import did_you_mean, parse_call

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Generator

    Ask = tuple[str, str, object, float | None]  # a request of the session API: method, path, body, timeout
    Answer = tuple[int, object]  # its status and JSON body

__all__ = ["CallPlan", "Printout", "command", "listing_of", "notice_line", "plan", "plan_recover"]


_HELP_WORDS = ("-h", "--help", "help")
_RECOVER_USAGE = (
    "Usage: {p}recover ID|PATH... [--pointer POINTER]... [--lines 120-180,300-] [--query EXPR] [--raw]\n"
    "       {p}recover ID|PATH [--offset N] [--length N]\n"
    "       {p}recover ID|PATH [--pointer POINTER] (--grep REGEX [-i] | --search WORDS)\n"
    "                          [--context N] [--skip N]\n"
    "\n"
    "Print the original of a shrunk or deduplicated result from the recovery directory, exactly (no\n"
    "newline added): its text (the text blocks joined); with --pointer, the one JSON value the RFC 6901\n"
    "pointer names inside it (a string as is, anything else as JSON; the notice names one that exists,\n"
    "e.g. /0 or /issues/0); with --lines, exactly the lines a preview's [lines A-B folded] marker names\n"
    "(several ranges: --lines 10-20,40-60); with --offset/--length, exactly the characters a\n"
    "[chars A-B folded] marker names (--offset A --length B-A); with --query, the JMESPath projection\n"
    "of that JSON (of the pointed part, with --pointer), e.g. --query 'issues[].{{key: key, title:\n"
    "title}}'; with --raw, the stored result as JSON. Several IDs or --pointer flags print each part in\n"
    "order, exactly, one after the other; stderr names them.\n"
    "--grep prints the lines matching a regular expression (RE2: no backreferences or lookaround;\n"
    "-i ignores case), --search the lines holding the words, best first; each as N:line, with\n"
    "--context lines around (N-line, default 2); JSON gives the matching values as POINTER: VALUE.\n"
    "The last line says how many more there are and the --skip that shows them.\n"
    "ID is the 32-hex response id from the notice, asked of the session (the recovery directory when\n"
    "no session answers); PATH is mcpsqueeze-ID.json inside the recovery directory. Anything outside\n"
    "that directory, symlinks and other odd files are refused (exit 2).\n"
)


class Printout:
    """What to print and how to exit."""

    def __init__(self, stdout: str = "", stderr: str = "", code: int = EXIT_OK) -> None:
        self.stdout = stdout
        self.stderr = stderr
        self.code = code

    def __repr__(self) -> str:
        return f"Printout(code={self.code}, stdout={self.stdout[:80]!r}, stderr={self.stderr[:200]!r})"


class CallPlan:
    """A tool call to send to the session (``POST /v1/call``)."""

    def __init__(
        self, server: str, tool: str, arguments: dict[str, object], *, full: bool, raw: bool, prog: str
    ) -> None:
        self.server = server
        self.tool = tool
        self.arguments = arguments
        self.full = full
        self.raw = raw
        self.prog = prog

    def body(self) -> dict[str, object]:
        return {"server": self.server, "tool": self.tool, "arguments": self.arguments, "full": self.full}


def _line(text: str) -> str:
    return text if text.endswith("\n") else text + "\n"


def _usage(message: str) -> Printout:
    return Printout(stderr=_line(message), code=EXIT_USAGE)


# recover's options that take a value: what one value is, and what a missing value should have been
_RECOVER_OPTIONS = {
    "--pointer": ("pointer", "a JSON pointer like /issues/0/title"),
    "--lines": ("range", "a line range like 120-180"),
    "--query": ("expression", "a JMESPath expression like issues[].key"),
    "--grep": ("pattern", "a regular expression like 'def parse_\\w+'"),
    "--search": ("search", "words to look for, like 'parse error'"),
    "--context": ("number", "a number of context lines like 2"),
    "--skip": ("number", "the number of matches to skip, like 10"),
    "--offset": ("number", "a character offset like 1200"),
    "--length": ("number", "a number of characters like 400"),
}


def plan_recover(
    argv: list[str], prefix: str = "mcpsq "
) -> tuple[list[str], dict[str, object], bool] | Printout:
    """Parse ``recover ID|PATH... [--pointer P]... [--lines A-B,C-D] [--query EXPR] [--grep RE | --search
    WORDS] [--raw]`` (``argv[0]`` is ``recover``): what to read, the recover tool's other arguments as given
    (the request checks them), and ``--raw``; or what to print instead."""
    usage = _RECOVER_USAGE.format(p=prefix)
    words = argv[1:]
    if any(w in _HELP_WORDS[:2] for w in words):
        return Printout(stdout=usage)
    see = f"see `{prefix}recover --help`"
    refs: list[str] = []
    pointers: list[str] = []  # --pointer may repeat: one part per pointer
    arguments: dict[str, object] = {}  # the other flags, each once; each as --flag VALUE or --flag=VALUE
    raw = False
    i = 0
    while i < len(words):
        word = words[i]
        flag, eq, inline = word.partition("=")
        if word == "--raw":
            raw = True
        elif word in ("-i", "--ignore-case"):
            arguments["ignore_case"] = True
        elif flag in _RECOVER_OPTIONS:
            what, needs = _RECOVER_OPTIONS[flag]
            if flag[2:] in arguments:
                return _usage(f"{prefix}recover: {flag} given twice; pass one {what}; {see}")
            if eq:
                value = inline
            elif i + 1 < len(words):
                i += 1
                value = words[i]
            else:
                return _usage(f"{prefix}recover: {flag} needs {needs}; {see}")
            if flag == "--pointer":
                pointers.append(value)
            else:
                arguments[flag[2:]] = value
        elif word.startswith("--") and len(word) > 2:
            return _usage(f"{prefix}recover: unknown flag {word}; {see}")
        else:
            refs.append(word)
        i += 1
    if not refs:
        return _usage(
            f"{prefix}recover: missing the response id (32 hex characters from the shrink notice) or the "
            f"recovery file path; {see}"
        )
    if "lines" in arguments and pointers:
        return _usage(f"{prefix}recover: give --pointer or --lines, not both; {see}")
    if "lines" in arguments and "query" in arguments:
        return _usage(f"{prefix}recover: give --lines or --query, not both; {see}")
    if pointers:
        arguments["pointer"] = pointers
    return refs, arguments, raw


def plan(
    argv: list[str],
    listing: Catalog,
    *,
    prefix: str = "mcpsq ",
    read_stdin: Callable[[], str] | None = None,
) -> CallPlan | Printout:
    """``SERVER [TOOL [flags]]`` -> help text, a usage error, or the call to make; ``prefix`` precedes the
    server's name as the user types it (``"mcpsq "``, or ``""`` for an entry point), in every message."""
    top = f"{prefix}--help" if prefix else "mcpsq --help"
    if not argv or argv[0] in _HELP_WORDS:
        from ._help import render_listing  # help texts load only when asked for

        return Printout(stdout=render_listing(listing, prefix or "mcpsq "))
    name = argv[0]
    server = listing.server(name)
    real = name
    if server is None and not prefix:
        server, real = _shell_word_alias(listing, name)
    if server is None:
        names = [s.name for s in listing.servers]
        known = ", ".join(names) or "none"
        return _usage(
            f"{prefix}{name}: no server named {name!r} in this session (servers: {known}); "
            f"{did_you_mean(name, names)}run `{top}` to list them."
        )
    if len(argv) == 1 or argv[1] in _HELP_WORDS:
        from ._help import render_server

        return Printout(stdout=render_server(server, prefix))
    typed = argv[1]
    tool = server.tool(typed)
    if tool is None:
        return _unknown_tool(server, typed, prefix)
    if "--help" in argv[2:] or "-h" in argv[2:]:
        from ._help import render_tool_help

        return Printout(stdout=render_tool_help(server.name, tool, prefix))
    prog = f"{prefix}{server.name} {tool.command}"
    try:
        arguments, full, raw = parse_call(argv[2:], tool.flags, prog=prog, read_stdin=read_stdin)
    except UsageError as exc:
        return _usage(f"{prog}: {exc}")
    return CallPlan(real, tool.name, arguments, full=full, raw=raw, prog=prog)


def _shell_word_alias(listing: Catalog, typed: str) -> tuple[ServerInfo | None, str]:
    """``mcp-time`` is the command of a server named ``time`` (a shell keyword, or a command on PATH
    when it was installed): that server, shown under the name typed, so help and errors name the
    command that works."""
    from ._names import SERVER_PREFIX

    real = typed[len(SERVER_PREFIX) :]
    found = listing.server(real) if typed.startswith(SERVER_PREFIX) else None
    if found is None:
        return None, typed
    import copy  # rare path: only for such servers

    shown = copy.copy(found)
    shown.name = typed
    return shown, real


def _unknown_tool(server: ServerInfo, typed: str, prefix: str) -> Printout:
    see = f"run `{prefix}{server.name} --help` to list its tools"
    if not server.up:
        reason = f" ({server.error})" if server.error else ""
        return Printout(
            stderr=_line(
                f"{prefix}{server.name}: the server {server.name!r} is down{reason}, so its tools are "
                "unknown; restart `mcpsqueeze serve` or fix this server's entry in its config, then retry."
            ),
            code=EXIT_BACKEND,
        )
    hint = did_you_mean(typed, [t.command for t in server.tools])
    return _usage(f"{prefix}{server.name}: no tool {typed!r} on {server.name}; {hint}{see}.")


# ----------------------------------------------------------------------------------------- rendering
def _rewrite(text: str, paths: tuple[str, str] | None) -> str:
    if paths is None or not text:
        return text
    host, shown = (p.rstrip("/") for p in paths)
    return text.replace(host + "/", shown + "/").replace(host, shown)


def notice_line(meta: object, paths: tuple[str, str] | None = None) -> str:
    """The one stderr line about a shrunk or deduplicated result ("" when it was neither)."""
    if not isinstance(meta, dict):
        return ""
    record = meta.get("truncation")
    if isinstance(record, dict) and "mcpsqueeze/dedup" not in meta:  # a pointer has its own line below
        rid = record.get("response_id")
        file = record.get("original_response_file")
        message = record.get("message")
        text = " ".join(message.split()) if isinstance(message, str) else "The result was shrunk."
        extras = []
        if isinstance(rid, str) and rid not in text:
            extras.append(f"response id {rid}; recover it with `mcpsq recover {rid}`")
        if isinstance(file, str) and file not in text:
            extras.append(f"original at {file}")
        if extras:
            text += " (" + "; ".join(extras) + ")"
        return _rewrite(f"mcpsqueeze: {text}\n", paths)
    dedup = meta.get("mcpsqueeze/dedup")
    if isinstance(dedup, dict):
        rid = dedup.get("response_id")
        file = dedup.get("original_response_file")
        call = dedup.get("same_as_call")
        tool = dedup.get("tool")
        text = f"mcpsqueeze: identical to the result of call #{call} ({tool}), so it was not printed again"
        if isinstance(rid, str):
            text += f"; response id {rid}: `mcpsq recover {rid}` prints it"
        if isinstance(file, str):
            text += f" (original at {file})"
        return _rewrite(text + ".\n", paths)
    return ""


def _text_and_notes(result: dict[str, object]) -> tuple[str, list[str]]:
    texts: list[str] = []
    notes: list[str] = []
    content = result.get("content")
    for block in content if isinstance(content, list) else []:
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "text" and isinstance(block.get("text"), str):
            texts.append(block["text"])
        elif kind == "resource" and isinstance(block.get("resource"), dict):
            resource = block["resource"]
            if isinstance(resource.get("text"), str):
                texts.append(resource["text"])
            else:
                notes.append(f"a binary resource {resource.get('uri', '')}".rstrip())
        elif kind in ("image", "audio"):
            size = len(block["data"]) if isinstance(block.get("data"), str) else 0
            notes.append(f"an {kind} block ({block.get('mimeType', 'unknown type')}, {size} base64 chars)")
        elif kind == "resource_link":
            notes.append(f"a resource link {block.get('uri', '')}".rstrip())
        else:
            notes.append(f"a {kind} block")
    if not texts and "structuredContent" in result:
        texts.append(dumps(result["structuredContent"], ensure_ascii=False))
    return "\n".join(texts), notes


def call_printout(body: object, *, raw: bool = False, paths: tuple[str, str] | None = None) -> Printout:
    """A ``POST /v1/call`` 200 answer -> stdout (the text), stderr (notice or error), exit code; ``paths``
    shows the host recovery directory as the user sees it (``/recovery`` in Just-Bash)."""
    result = body.get("result") if isinstance(body, dict) else None
    if not isinstance(result, dict):
        return Printout(
            stderr="mcpsq: the session answered without a result; this is a bug in mcpsqueeze serve, "
            "please report it (the call may have run).\n",
            code=EXIT_BACKEND,
        )
    is_error = result.get("isError") is True
    if raw:
        text = dumps(result, ensure_ascii=False)
        return Printout(stdout=_rewrite(text, paths) + "\n", code=EXIT_TOOL_ERROR if is_error else EXIT_OK)
    text, notes = _text_and_notes(result)
    text = _rewrite(text, paths)
    if is_error:
        message = text or "the tool reported an error without any text; rerun with --raw to see the result"
        return Printout(stderr=_line(message), code=EXIT_TOOL_ERROR)
    meta = result.get("_meta")
    stderr = notice_line(meta, paths)
    if notes:
        stderr += f"mcpsq: the result also holds {', '.join(notes)}; rerun with --raw to see everything.\n"
    return Printout(stdout=text, stderr=stderr)  # exact: as `mcpsq recover` prints the original


def listing_of(status: int, body: object) -> Catalog | Printout:
    """The session's ``GET /v1/servers`` answer as a listing, or what to print instead."""
    if status != 200:
        return render_error(status, body)
    if not isinstance(body, dict):
        return Printout(
            stderr="mcpsq: the session answered /v1/servers without JSON; is MCPSQUEEZE_SOCKET pointing at "
            "`mcpsqueeze serve`? Restart it and retry.\n",
            code=EXIT_BACKEND,
        )
    return Catalog.from_json(body)


def call_answer(
    action: CallPlan, status: int, body: object, recovery_dir: str, paths: tuple[str, str] | None = None
) -> Printout:
    """What a tool call prints for the session's answer to ``POST /v1/call`` (``action.body()``):
    ``call_printout``, or, when the answer is a dedup pointer instead of the data (from a session other
    than ours), the original read from ``recovery_dir`` after the notice, so stdout never lacks the data."""
    if status != 200:
        return render_error(status, body, prog=action.prog)
    result = body.get("result") if isinstance(body, dict) else None
    meta = result.get("_meta") if isinstance(result, dict) else None
    dedup = meta.get("mcpsqueeze/dedup") if isinstance(meta, dict) else None
    rid = dedup.get("response_id") if isinstance(dedup, dict) and not action.raw else None
    if not isinstance(rid, str):
        return call_printout(body, raw=action.raw, paths=paths)
    notice = call_printout(body, paths=paths).stderr
    read = _read_original(recovery_dir, rid, "mcpsq recover", paths)
    if isinstance(read, Printout):
        return Printout(read.stdout, notice + read.stderr, read.code)
    return Printout(_text_and_notes(read[0])[0], notice)


def render_error(status: int, body: object, *, prog: str = "mcpsq") -> Printout:
    """A non-200 answer of the session -> the message (what happened, what to do) and exit code."""
    error = body.get("error") if isinstance(body, dict) else None
    code_name = error.get("code") if isinstance(error, dict) else None
    message = error.get("message") if isinstance(error, dict) else None
    detail = str(message).rstrip(".") if message else f"HTTP {status}"
    if status == 401 or code_name == "unauthorized":
        return Printout(
            stderr=f"{prog}: the session refused our token ({detail}). Point MCPSQUEEZE_TOKEN_FILE at the "
            "token file `mcpsqueeze serve` uses (--token-file), or use its Unix socket via "
            "MCPSQUEEZE_SOCKET.\n",
            code=EXIT_UNREACHABLE,
        )
    if status == 400:
        return _usage(f"{prog}: the session refused the call: {detail}. See `{prog} --help`.")
    if status == 404:
        return _usage(
            f"{prog}: {detail}. The session's servers or tools may have changed; "
            "run `mcpsq --help` to list them."
        )
    if status == 504 or code_name == "timeout":
        return Printout(
            stderr=f"{prog}: the backend did not answer in time ({detail}). Retry, perhaps with a smaller "
            "request, or raise the session's timeout.\n",
            code=EXIT_BACKEND,
        )
    return Printout(
        stderr=f"{prog}: the backend failed ({detail}). Retry; if it keeps failing, check the server's "
        "entry in the `mcpsqueeze serve` config and the session's log.\n",
        code=EXIT_BACKEND,
    )


# ------------------------------------------------------------------------------------- one command
def command(
    argv: list[str],
    *,
    prefix: str = "mcpsq ",
    read_stdin: Callable[[], str] | None = None,
    recovery_dir: str | None = None,
    default_dir: str = "",
    paths: tuple[str, str] | None = None,
    cwd: str = "/",
) -> Generator[Ask, Answer, Printout]:
    """One shell command without I/O: it yields each session API request (timeout None: the door's call
    timeout), is sent its (status, JSON body) or thrown its error, and returns what to print; the shim and
    Just-Bash drive it, so both print the same bytes. ``recovery_dir``: None for the session's, else
    ``default_dir``; ``paths``: that directory as the user sees it (host, shown), ``cwd`` there."""
    if prefix and argv[:1] == ["recover"]:
        request = plan_recover(argv, prefix)
        if isinstance(request, Printout):
            return request
        return (yield from _recover(*request, recovery_dir, default_dir, prefix, paths, cwd))
    try:
        listing = listing_of(*(yield ("GET", "/v1/servers", None, 30.0)))
    except BackendError as exc:
        if not (prefix and len(argv) == 1 and argv[0] in _HELP_WORDS):
            raise
        from ._help import render_usage  # asking how to use a command is never an error: exit 0

        return Printout(stdout=render_usage(str(exc), prefix))
    if isinstance(listing, Printout):
        return listing
    action = plan(argv, listing, prefix=prefix, read_stdin=read_stdin)
    if not isinstance(action, CallPlan):
        return action
    status, body = yield ("POST", "/v1/call", action.body(), None)
    directory = recovery_dir or listing.recovery_dir or default_dir  # only for a dedup pointer
    return call_answer(action, status, body, directory, paths)


def _get(path: str, timeout: float | None) -> Generator[Ask, Answer, object]:
    """The body of the session's 200 answer to ``GET path``; None for any other answer, or when no session
    answers (the recovery files are still there to read)."""
    try:
        status, body = yield ("GET", path, None, timeout)
    except MCPSqueezeError:
        return None
    return body if status == 200 else None


def _in_view(ref: str, shown: str, cwd: str) -> str | None:
    """A reference typed where the recovery directory shows as ``shown``: a name in it (None: refused)."""
    if "/" not in ref:
        return ref  # a response id or a bare file name: the scoped reader checks it
    path = ref if ref.startswith("/") else posixpath.join(cwd or "/", ref)
    if ".." in path.split("/"):
        return None
    directory, _, name = posixpath.normpath(path).rpartition("/")
    return name if directory == shown and name else None


def _read_original(
    directory: str, ref: str, prog: str, paths: tuple[str, str] | None
) -> tuple[dict[str, object], str] | Printout:
    """A recovery file through the mount-scoped reader: the original and its text, or what to print."""
    import json  # the stdlib one here: recovery is rare
    from pathlib import Path

    from mcpsqueeze.recovery import open_recovery_file

    try:
        data = open_recovery_file(Path(directory), ref)
    except (RecoveryError, UsageError) as exc:
        return _usage(f"{prog}: {_rewrite(str(exc), paths)}")
    try:
        original = json.loads(data)
    except (ValueError, RecursionError):
        return _usage(f"{prog}: {ref!r} is not a JSON recovery file; pass a response id instead.")
    if not isinstance(original, dict):
        return _usage(f"{prog}: {ref!r} does not hold a tool result; pass a response id instead.")
    return original, data.decode("utf-8", "replace")


def _recover(
    typed_refs: list[str],
    arguments: dict[str, object],
    raw: bool,
    recovery_dir: str | None,
    default_dir: str,
    prefix: str,
    paths: tuple[str, str] | None,
    cwd: str,
) -> Generator[Ask, Answer, Printout]:
    """Print one original, or the part asked for, exactly as the recover tool answers it (no newline added;
    exit 2 when refused). A bare response id is asked of the session first, else the file is read through
    the mount-scoped reader."""
    import json

    from mcpsqueeze.core import RecoverRequest, answer, parts_text  # the lazy face: stdlib-only modules
    from mcpsqueeze.recovery import is_response_id

    prog = f"{prefix}recover"
    shown = None if paths is None else paths[1]
    refs = []
    for typed in typed_refs:
        ref = typed if shown is None else _in_view(typed, shown, cwd)
        if ref is None:
            return _usage(
                f"{prog}: refused to read {typed!r}: only recovery files directly in {shown} can be read; "
                "pass the response id from the notice instead."
            )
        refs.append(ref)
    originals: list[dict[str, object]] = []
    raws: list[str] = []
    try:
        asked = RecoverRequest.parse({"response_id": [_id_in(ref) for ref in refs], **arguments})
    except UsageError as exc:  # bounds first: nothing is read for a refused request
        return _usage(f"{prog}: {_rewrite(str(exc), paths)}")
    for ref in refs:
        # the session's copy first: it knows the caller and counts the recovery
        fetched = (yield from _get(f"/v1/original/{ref}", None)) if is_response_id(ref) else None
        if isinstance(fetched, dict):
            originals.append(fetched)
            raws.append(json.dumps(fetched, ensure_ascii=False, separators=(",", ":")))
            continue
        if recovery_dir is None:
            listed = yield from _get("/v1/servers", 10.0)
            found = listed.get("recovery_dir") if isinstance(listed, dict) else None
            recovery_dir = found if isinstance(found, str) else default_dir
        read = _read_original(recovery_dir, ref, prog, paths)
        if isinstance(read, Printout):
            return read
        originals.append(read[0])
        raws.append(read[1])
    if len(originals) == 1 and raw and not {"pointer", "query"} & arguments.keys():
        return Printout(stdout=_line(raws[0]))
    if len(originals) == 1 and not asked.selects:  # the whole text, resources' text too (as a call prints)
        return Printout(stdout=_text_and_notes(originals[0])[0])
    try:
        result = answer(originals, asked)
    except (RecoveryError, UsageError) as exc:
        return _usage(f"{prog}: {exc}")
    if "mcpsqueeze/parts" in result.get("_meta", {}):  # several parts: the label on stderr, parts exact
        label = _line(_rewrite(result["content"][0]["text"], paths))
        return Printout(stdout=parts_text(result), stderr=label)
    if asked.grep is not None or asked.search is not None:  # a search's answer, not the original's bytes
        return Printout(stdout=_line(parts_text(result)))
    return Printout(stdout=parts_text(result))


def _id_in(ref: str) -> str:
    """The response id a reference names: itself, or the id in a recovery file's name (a path is
    checked by the mount-scoped reader; any other name is refused there, so its id does not matter)."""
    from mcpsqueeze.recovery import is_response_id

    if is_response_id(ref):
        return ref
    stem = ref.rsplit("/", 1)[-1]
    if stem.endswith(".json") and is_response_id(stem[-37:-5]):
        return stem[-37:-5]
    return "0" * 32
