"""Tool and flag names as a shell user types them: kebab-case (``searchIssues``, ``search_issues`` and
``Search Issues`` are ``search-issues``), with the way back. On a clash an original already spelled so
wins, else the first in code-point order; the others get ``-2``, ``-3``. Originals work verbatim too.
"""

from __future__ import annotations

__all__ = ["SHELL_WORDS", "command_names", "kebab", "server_command"]

# ASCII only, as the regular expressions this replaced ([a-z0-9], [A-Z]); `re` costs the shim ~7 ms.
_UPPER = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZ")
_LOWER = frozenset("abcdefghijklmnopqrstuvwxyz")
_LOWER_OR_DIGIT = _LOWER | frozenset("0123456789")
_ALNUM = _UPPER | _LOWER_OR_DIGIT


def kebab(name: str) -> str:
    """``searchIssues``/``search_issues``/``HTTPRequest`` -> ``search-issues``/``http-request``: a word starts
    at a capital after a lower-case letter or digit, or at an acronym's last capital before lower case;
    other characters separate words. A name without letters or digits stays as it is."""
    out: list[str] = []
    last = len(name) - 1
    for i, char in enumerate(name):
        if char not in _ALNUM:
            out.append("-")
            continue
        if char in _UPPER and i > 0:
            before = name[i - 1]
            if before in _LOWER_OR_DIGIT or (before in _UPPER and i < last and name[i + 1] in _LOWER):
                out.append("-")
        out.append(char)
    converted = "-".join(word for word in "".join(out).split("-") if word).lower()
    return converted or name


def command_names(originals: list[str]) -> dict[str, str]:
    """The kebab-case command name of each original, as ``{command: original}`` sorted by the kebab name
    each was made from."""
    groups: dict[str, list[str]] = {}
    for original in sorted(set(originals)):
        groups.setdefault(kebab(original), []).append(original)
    by_command: dict[str, str] = {}
    for base in sorted(groups):
        suffix = 1
        for original in sorted(groups[base], key=lambda o: (o != base, o)):
            command = base
            while command in by_command:
                suffix += 1
                command = f"{base}-{suffix}"
            by_command[command] = original
    return by_command


# Words a shell gives its own meaning: a command file named like a keyword or builtin cannot be
# called at all (bash runs the builtin; Just-Bash does too for `time`, `test`, `cd`, `true`...),
# and one named like a standard tool hides that tool (Just-Bash runs custom commands first).
_KEYWORDS = frozenset((
    "if", "then", "else", "elif", "fi", "case", "esac", "for", "select", "while", "until", "do",
    "done", "in", "function", "time", "coproc",
))  # fmt: skip
_BUILTINS = frozenset((
    "alias", "bg", "bind", "break", "builtin", "caller", "cd", "command", "compgen", "complete",
    "compopt", "continue", "declare", "dirs", "disown", "echo", "enable", "eval", "exec", "exit",
    "export", "false", "fc", "fg", "getopts", "hash", "help", "history", "jobs", "kill", "let",
    "local", "logout", "mapfile", "popd", "printf", "pushd", "pwd", "read", "readarray", "readonly",
    "return", "set", "shift", "shopt", "source", "suspend", "test", "times", "trap", "true", "type",
    "typeset", "ulimit", "umask", "unalias", "unset", "wait",
))  # fmt: skip
_TOOLS = frozenset((
    "awk", "cat", "cp", "curl", "cut", "date", "diff", "env", "find", "grep", "head", "jq", "ls",
    "mkdir", "mv", "rm", "sed", "sleep", "sort", "sqlite3", "tail", "tee", "touch", "tr", "uniq",
    "wc", "xargs",
))  # fmt: skip
SHELL_WORDS = _KEYWORDS | _BUILTINS | _TOOLS
SERVER_PREFIX = "mcp-"


def server_command(server: str) -> tuple[str, str | None]:
    """The command name for a server's entry point, and a warning when its own name cannot serve (``time``
    becomes ``mcp-time``); ``mcpsq SERVER TOOL`` always works."""
    if server not in SHELL_WORDS:
        return server, None
    if server in _KEYWORDS:
        why = "a shell keyword, so a command of that name can never be called"
    elif server in _BUILTINS:
        why = "a shell builtin, so a command of that name can never be called"
    else:
        why = "a standard command, which a command of that name would hide"
    command = SERVER_PREFIX + server
    return command, (
        f"the server {server!r} is named like {why}; its command is `{command}` instead "
        f"(`mcpsq {server} TOOL ...` works too). Rename the server in the serve config to choose another."
    )
