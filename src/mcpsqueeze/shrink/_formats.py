"""Strict detection of what a text result is: source code, a diff, a git log, a config or lock
file, Markdown, CSV/TSV or a log.

Strict because a wrong guess costs more than no guess: an outline of prose that was taken for
code hides what matters, while the head-and-tail fallback is merely ordinary. Each test asks for
several independent signs, looks at a bounded sample (detection stays cheap on 50 MB), and
anything unsure is ``None``. The texts are what servers really send: mcp-server-git prefixes its
diffs ("Diff with HEAD~3:") and logs ("Commit history:") with one line, and writes commits as
``Commit: <sha>`` / ``Message: ...``; its ``git_show`` has ``---``/``+++`` file headers without
``diff --git``; server-filesystem returns a file's raw text.
"""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass
from itertools import compress, islice, repeat
from operator import not_

from mcpsqueeze.shrink._locks import LABELS, SAMPLE_LINES, few_fail, lock_kind, yarn_head

__all__ = ["LANGUAGES", "MAX_LINE", "Format", "detect", "shape"]

MAX_LINE = 2000  # a text with longer lines (minified code, base64) is no outline's business


@dataclass(frozen=True)
class Format:
    """``name`` picks the plan; ``label`` is what the preview's header calls the text."""

    name: str
    label: str
    language: str = ""


# ----------------------------------------------------------------------------------------- diffs, logs
HUNK_RE = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
# Searched in the sample with a newline in front: led by \n, the engine scans for newlines in C.
_DIFF_GIT_RE = re.compile(r"\ndiff --git \S")
_FILE_PAIR_RE = re.compile(r"\n--- \S.*\n\+\+\+ \S")
_HUNK_M_RE = re.compile(r"\n@@ -\d+(?:,\d+)? \+\d+(?:,\d+)? @@")
#: ``git log`` / ``git show`` ("commit <sha>") and mcp-server-git's git_log ("Commit: <sha>").
COMMIT = r"(?:commit [0-9a-f]{7,64}(?: \(.*\))?|Commit: [0-9a-f]{40})[ \t]*$"
COMMIT_RE = re.compile("^" + COMMIT)
_COMMIT_M_RE = re.compile("^" + COMMIT + r"\n", re.M)
_AFTER_COMMIT_RE = re.compile(r"^(?:Author|Merge|Date|AuthorDate|Commit|CommitDate): ", re.M)
_ONELINE_RE = re.compile(r"^(?:[*|\\/ ]+ )?[0-9a-f]{7,40} \S")


def _diff_ok(lines: list[str]) -> bool:
    """Every hunk in the sample parses: its counted lines all carry a diff prefix."""
    i, hunks = 0, 0
    while i < len(lines):
        match = HUNK_RE.match(lines[i])
        i += 1
        if match is None:
            continue
        hunks += 1
        old = 1 if match.group(2) is None else int(match.group(2))
        new = 1 if match.group(4) is None else int(match.group(4))
        while (old > 0 or new > 0) and i < len(lines):
            head = lines[i][:1]
            if head in (" ", "", "\n"):
                old, new = old - 1, new - 1
            elif head == "-":
                old -= 1
            elif head == "+":
                new -= 1
            elif head != "\\":
                return False
            i += 1
    return hunks > 0


def _diff_start(lines: list[str]) -> bool:
    """The text is a diff from its start (not a document quoting one): its first line is a diff or
    commit header, or one line ending in ':' (mcp-server-git's "Diff with HEAD~3:") comes before one."""
    heads = [line for line in lines[:3] if line.strip()]
    for k, line in enumerate(heads[:2]):
        if line.startswith(("diff --git ", "diff --cc ", "--- ")) or COMMIT_RE.match(line):
            return True
        if k > 0 or not line.rstrip().endswith(":"):
            return False
    return False


# ----------------------------------------------------------------------------------------------- code
@dataclass(frozen=True)
class _Language:
    label: str
    definition: re.Pattern[str]  # starts with \n: run it on the text with a newline in front
    signs: re.Pattern[str]  # lines that only this language (family) writes (led by \n unless ^)
    min_signs: int
    inline: str = ""  # signs anywhere in a line (never inside a line-start sign's match), counted apart
    # An upper bound of the signs, when counting them is costly: patterns each of whose matches no
    # other match of the signs can share (run on ``led``; literal-led or newline-led, so cheap), and
    # literals one of which every other match of the signs contains
    bound: tuple[tuple[re.Pattern[str], ...], tuple[str, ...]] | None = None
    # Where a definition can be, when trying ``definition`` at every line start is costly: literals one of
    # which each line a definition is found on holds, or a pattern (literal-led, so cheap) it matches
    lines_with: tuple[tuple[str, ...], re.Pattern[str]] | None = None

    def count_definitions(self, led: str) -> int:
        """``len(self.definition.findall(led))``. Each match starts at a newline and ends before the next
        one (no part of a definition pattern matches a newline), so the count is that of the lines at
        whose leading newline ``definition`` matches; with ``lines_with``, only the lines that hold one of
        its literals or match its pattern are tried, unless they are many (then one findall costs less)."""
        if self.lines_with is None:
            return len(self.definition.findall(led))
        literals, pattern = self.lines_with
        most = len(led) >> 8  # (a line tried costs about what findall spends on 256 characters)
        find, rfind = led.find, led.rfind
        starts: set[int] = set()
        for literal in literals:
            at = find(literal)
            while at >= 0:
                starts.add(rfind("\n", 0, at))
                end = find("\n", at)  # (the next occurrence on another line)
                if end < 0:
                    break
                at = find(literal, end)
            if len(starts) > most:
                return len(self.definition.findall(led))
        for found in pattern.finditer(led):
            starts.add(rfind("\n", 0, found.start()))
            if len(starts) > most:
                return len(self.definition.findall(led))
        match = self.definition.match
        return sum(match(led, start) is not None for start in starts)

    def may_have_signs(self, outside: str, led: str) -> bool:
        """False when fewer than ``min_signs`` signs are possible (``count_signs`` would say so too):
        findall's matches do not overlap, so each match of the signs starts where one of the bound's
        patterns matches (a place no other match of the signs starts at), or holds an occurrence of
        one of its literals that no other match holds. (The literals are counted until enough.)"""
        if self.bound is None:
            return True
        patterns, literals = self.bound
        most = sum(len(pattern.findall(led)) for pattern in patterns)
        for literal in literals:
            if most >= self.min_signs:
                break
            most += outside.count(literal)
        return most >= self.min_signs

    def count_signs(self, outside: str, led: str) -> int:
        found = len(self.signs.findall(outside if self.signs.pattern.startswith("^") else led))
        return found + (len(re.findall(self.inline, outside)) if self.inline else 0)


_M = re.M
# Definition patterns start with ``\n`` instead of ``^`` and run on the text with a newline in front
# (``led``): the regex engine then scans for newlines in C instead of trying ``^`` at every character,
# and a possessive ``[ \t]*+`` never backtracks into an indentation no definition starts with.
# ``(?<=[ \t])`` after it stands for a ``^[ \t]+`` (indented) alternative.
LANGUAGES: dict[str, _Language] = {
    "python": _Language(
        "Python source",
        re.compile(r"\n[ \t]*+(?:(?:async[ \t]+)?def[ \t]+\w+[ \t]*[(\[]|class[ \t]+\w+[ \t]*[(:\[])", _M),
        re.compile(
            r"\n(?:from[ \t]+[\w.]+[ \t]+import[ \t]|import[ \t]+[\w.]+[ \t]*$|if __name__ == "
            r"|[ \t]*+(?:@\w[\w.]*|(?:elif|except|self\.|raise|yield)\b"
            r"|(?:if|for|while|with|else|try)\b.*:[ \t]*$))",
            _M,
        ),
        3,
    ),
    "rust": _Language(
        "Rust source",
        re.compile(
            r"\n[ \t]*+(?:(?:pub(?:\([^)\n]*\))?[ \t]+)?"
            r"(?:(?:async|const|unsafe|extern(?:[ \t]+\"[^\"\n]*\")?)[ \t]+)*"
            r"fn[ \t]+\w+|(?:pub(?:\([^)\n]*\))?[ \t]+)?(?:struct|enum|trait|union|mod)[ \t]+\w+"
            r"|(?:unsafe[ \t]+)?impl\b|macro_rules![ \t]*\w+)",
            _M,
        ),
        re.compile(r"\n[ \t]*+(?:use[ \t]+[\w:{}, *]+;|let[ \t]+(?:mut[ \t]+)?\w+|#\[\w|//[/!] )"),
        2,
        r"->[ \t]*[\w&(<]",
    ),
    "go": _Language(
        "Go source",
        re.compile(
            r"\n(?:func[ \t]|type[ \t]+\w+[ \t]+(?:struct|interface|func)\b|type[ \t]+\w+[ \t]+\w)", _M
        ),
        re.compile(r"\n(?:package[ \t]+\w+[ \t]*$|import[ \t]+(?:\(|\"))", _M),
        2,
        ":=",
    ),
    "java": _Language(
        "Java source",
        re.compile(
            r"\n[ \t]*+(?:"
            r"(?:(?:public|protected|private|static|final|abstract|sealed|non-sealed|strictfp)[ \t]+)*"
            r"(?:class|interface|enum|record|@interface)[ \t]+\w+"
            r"|(?:(?:public|protected|private|static|final|abstract|synchronized|native|default"
            r"|strictfp)[ \t]+)+"
            r"(?:<[^>\n]+>[ \t]+)?(?:[\w<>\[\],.?]+[ \t]+)?\w+[ \t]*\()",
            _M,
        ),
        re.compile(r"\n(?:package[ \t]+[\w.]+;|import[ \t]+(?:static[ \t]+)?[\w.*]+;|[ \t]*+@Override\b)"),
        1,
    ),
    "js": _Language(
        "JavaScript/TypeScript source",
        re.compile(
            r"\n[ \t]*+(?:(?:export[ \t]+)?(?:default[ \t]+)?(?:async[ \t]+)?function\b[ \t*]*\w+"
            r"|(?:export[ \t]+)?(?:default[ \t]+)?(?:abstract[ \t]+)?class[ \t]+\w+"
            r"|(?:export[ \t]+)?(?:const|let|var)[ \t]+\w+[ \t]*(?::[^=\n]+)?=[ \t]*(?:async[ \t]+)?"
            r"(?:<[^>\n]*>)?(?:\([^)\n]*\)|\w+)[ \t]*(?::[^=\n]+)?=>"
            r"|(?<=[ \t])constructor[ \t]*\("
            r"|(?:(?:export[ \t]+)?(?:const|let|var)[ \t]+\w+|[\w$]+(?:\.[\w$]+)+)[ \t]*=[ \t]*"
            r"(?:async[ \t]+)?function\b"
            r"|(?:export[ \t]+)?(?:declare[ \t]+)?(?:interface|type|enum|namespace)[ \t]+\w+"
            r"|(?<=[ \t])"
            r"(?:(?:public|private|protected|static|async|readonly|override|abstract|get|set)[ \t]+)*"
            r"(?!(?:if|for|while|switch|catch|return|function|else|do|try|with)\b)#?\w+[ \t]*(?:<[^>\n]*>)?"
            r"\([^)\n]*\)[ \t]*(?::[^{\n]+)?\{[ \t]*$)",
            _M,
        ),
        re.compile(
            r"^[ \t]*(?:import[ \t].*from[ \t]+['\"]|import[ \t]+['\"]|export[ \t]"
            r"|(?:const|let|var)[ \t]+\w+[ \t]*=)"
            r"|require\(['\"]|=>|;[ \t]*$|module\.exports|['\"]use strict['\"]",
            _M,
        ),
        3,
        # (tried at every character, the signs above cost more than the rest of `detect` on code)
        bound=(
            (
                # (``[ \t]*+``: every alternative starts with a letter, so giving back indentation
                # never makes a match; possessive, indented lines are not tried once per column)
                re.compile(
                    r"\n[ \t]*+(?:import[ \t].*from[ \t]+['\"]|import[ \t]+['\"]|export[ \t]"
                    r"|(?:const|let|var)[ \t]+\w+[ \t]*=)"
                ),
                re.compile(r";[ \t]*$", _M),
            ),
            ("require(", "=>", "module.exports", "use strict"),
        ),
        # Each alternative of the definitions holds one of these words (``function``, ``class``, ``=>``,
        # ``constructor``, the declaration keywords), but a method's line, which ends in ``{``
        lines_with=(
            ("function", "class", "=>", "constructor", "interface", "type", "enum", "namespace"),
            re.compile(r"\{[ \t]*$", _M),
        ),
    ),
}
_FENCED_RE = re.compile(r"^[ \t]*(```|~~~).*?^[ \t]*\1[ \t]*$", re.M | re.S)


# `_FENCED_RE` led by the newline before each block instead of ``^`` (so the engine finds candidates
# by scanning for newlines in C, not by trying every character); run on the text with a newline in front,
# it takes out the same blocks and leaves their leading newline (`_unfenced`).
_FENCED_LED_RE = re.compile(r"\n[ \t]*(```|~~~).*?^[ \t]*\1[ \t]*$", re.M | re.S)


def _unfenced(sample: str) -> str:
    """``_FENCED_RE.sub("", sample)``: ``sample`` without its fenced code blocks."""
    if "```" not in sample and "~~~" not in sample:
        return sample
    return _FENCED_LED_RE.sub("\n", "\n" + sample)[1:]


def _code(sample: str, outside: str) -> Format | None:
    """The language whose definitions and own signs both show, clearly ahead of the others.
    ``outside``: ``_unfenced(sample)`` (code blocks of a Markdown text are not the text)."""
    body = list(filter(str.strip, sample.split("\n", 400)[:400]))  # (the non-blank lines, in C)
    if not body or sum(map(len, body)) > 90 * len(body):
        return None  # lines over 90 characters on average: paragraphs, not code (skip the costly patterns)
    led = "\n" + outside
    scored: list[tuple[int, str]] = []
    for name, language in LANGUAGES.items():
        definitions = language.count_definitions(led)
        if definitions < 2 or not language.may_have_signs(outside, led):
            continue  # not this language, whatever its signs (the costlier count) would say
        signs = language.count_signs(outside, led)
        if signs >= language.min_signs:
            scored.append((definitions + signs, name))
    if not scored:
        return None
    scored.sort(reverse=True)
    if len(scored) > 1 and scored[1][0] * 4 > scored[0][0] * 3:
        # Two languages nearly tied: a JavaScript file that Java's patterns also read, say.
        pair = {scored[0][1], scored[1][1]}
        if pair != {"js", "java"}:
            return None
    return Format("code", LANGUAGES[scored[0][1]].label, scored[0][1])


# ------------------------------------------------------------------------------------- tables, config
def _table(lines: list[str]) -> Format | None:
    """CSV or TSV: a header of 2+ fields and rows with the same field count, one row per line."""
    if len(lines) < 6:
        return None
    head = lines[0]
    if head.lstrip()[:1] in ("{", "["):
        return None  # JSON lines: a record per line, not a table
    delimiter = "\t" if head.count("\t") >= 1 and head.count("\t") >= head.count(",") else ","
    if head.count(delimiter) < 1:
        return None
    rows = list(filter(str.strip, lines[:SAMPLE_LINES]))
    # A row without the delimiter is one field, never the header's 2+: with more than 3 % of them the
    # rows cannot agree below, whatever the parse says (prose or code with a comma in its first line).
    # (Counted before the line ends go: taking off "\r\n" never takes off a delimiter.)
    if 100 * (len(rows) - sum(map(str.__contains__, rows, repeat(delimiter)))) > 3 * len(rows):
        return None
    rows = list(map(str.rstrip, rows, repeat("\r\n")))
    try:
        parsed = list(csv.reader(rows, delimiter=delimiter, strict=True))
    except csv.Error:
        return None
    if not rows or len(parsed) != len(rows):  # none (blank lines), or a quoted field spans lines
        return None
    width = len(parsed[0])
    if width < 2 or sum(len(r) == width for r in parsed) < 0.97 * len(parsed):
        return None
    if any(len(name) > 40 or len(name.split()) > 3 for name in parsed[0]):
        return None  # a header names columns; prose with commas does not
    if len(set(rows)) < 0.5 * len(rows):
        return None
    if any(line.count('"') % 2 for line in rows):
        return None
    return Format("tsv", "TSV table") if delimiter == "\t" else Format("csv", "CSV table")


SECTION_RE = re.compile(r"^[ \t]*\[{1,2}[^\[\]\n=]+\]{1,2}[ \t]*(?:[#;].*)?$")
_KEY_RE = re.compile(r"^[ \t]*[\w.\-\"' ]+?[ \t]*(?:=|:(?=[ \t]))[ \t]*\S")
_CONT_RE = re.compile(r"^(?:[ \t]+\S|[\"'\]\[{}]|[ \t]*[#;]|[ \t]*$)")
YAML_KEY_RE = re.compile(r"^([ \t]*)(?:- )*(?:\"[^\"\n]*\"|'[^'\n]*'|[^\s#:\"'\-][^:#\n]*?):(?:[ \t]|$)")
_YAML_OTHER_RE = re.compile(r"^(?:[ \t]*- |[ \t]*-$|---|\.\.\.|[ \t]*#|[ \t]*$|[ \t]+\S)")
_REQUIREMENT_RE = re.compile(r"^[A-Za-z0-9][\w.\-]*(?:\[[^\]\n]*\])?[ \t]*(?:===?|[<>!~]=|@|[<>])[ \t]*\S")
_GOSUM_RE = re.compile(r"^\S+ v\S+ h1:\S+=$")


def requirement(line: str) -> bool:
    """A line of a requirements list or a checksum list (go.sum)."""
    return bool(_REQUIREMENT_RE.match(line) or _GOSUM_RE.match(line))


def _config(lines: list[str]) -> Format | None:
    lines_ = list(filter(str.strip, lines[:SAMPLE_LINES]))  # the non-blank lines not commented out, in C
    body = list(compress(lines_, map(not_, map(str.startswith, map(str.lstrip, lines_), repeat(("#", ";"))))))
    if len(body) < 3:
        return None
    if few_fail(body, requirement, 0.1):
        return Format("requirements", "requirements/lock list")
    if lines[0].startswith("# yarn lockfile") or (
        sum(map(str.startswith, body, repeat('  version "'))) >= 2 and sum(map(yarn_head, body)) >= 2
    ):
        return Format("yarn", "yarn lock file")
    if few_fail(
        body, lambda line: bool(SECTION_RE.match(line) or _KEY_RE.match(line) or _CONT_RE.match(line)), 0.03
    ):
        sections = sum(bool(SECTION_RE.match(line)) for line in body)
        keys = sum(bool(_KEY_RE.match(line)) for line in body)
        if sections >= 1 and keys >= 2 and sections + keys >= 0.3 * len(body):
            return Format("toml", "TOML/INI file")
    if not few_fail(body, lambda line: bool(YAML_KEY_RE.match(line) or _YAML_OTHER_RE.match(line)), 0.03):
        return None
    yaml_keys = [YAML_KEY_RE.match(line) for line in body]
    nested = any(
        m is not None
        and line.rstrip().endswith(":")
        and i + 1 < len(body)
        and len(body[i + 1]) - len(body[i + 1].lstrip(" \t")) > len(m.group(1))
        for i, (m, line) in enumerate(zip(yaml_keys, body, strict=True))
    )
    if nested and sum(m is not None for m in yaml_keys) >= 3:
        return Format("yaml", "YAML file")
    return None


# --------------------------------------------------------------------------------------- prose, logs
HEADING_RE = re.compile(r"^#{1,6}[ \t]+\S")
_SETEXT_RE = re.compile(r"^(?:=+|-+)[ \t]*$")
_MARKDOWN_SIGNS_RE = re.compile(
    r"^[ \t]*(?:```|~~~)|^[ \t]*(?:[-*+]|\d+[.)])[ \t]+\S|\[[^\]\n]+\]\([^)\n]+\)|^[ \t]*\|.*\|[ \t]*$"
    r"|\*\*\w|`\w[^`\n]*`",
    re.M,
)
_HEADING_LED_RE = re.compile(r"\n#{1,6}[ \t]+\S")
_CODE_END_RE = re.compile(r"(?:[;{}\\]|&&|\|\|)[ \t]*$|^[ \t]*(?:FROM|RUN|COPY|ENV|ARG|fi|done|esac)\b", re.M)
# Its two alternatives apart, each led by a newline: a match of one never holds a place where the other
# matches, so their counts add up to `_CODE_END_RE`'s, and each runs from newlines, in C, where the
# alternation tried every character. The first (a line that ends like code) on the text reversed: each of
# its matches ends a line, at most one per line, so the count is that of the reversed lines it starts.
_LINE_END_REVERSED_RE = re.compile(r"\n[ \t]*+(?:[;{}\\]|&&|\|\|)")
_SHELL_START_RE = re.compile(r"\n[ \t]*(?:FROM|RUN|COPY|ENV|ARG|fi|done|esac)\b")


def _code_ends(outside: str) -> int:
    """``len(_CODE_END_RE.findall(outside))``."""
    ends = len(_LINE_END_REVERSED_RE.findall("\n" + outside[::-1]))
    return ends + len(_SHELL_START_RE.findall("\n" + outside))


_SETEXT_LED_RE = re.compile(r"\n(?:=+|-+)[ \t]*$", re.M)  # `_SETEXT_RE` led by the line's newline


def _setext_headings(lines: list[str]) -> int:
    """The lines 1 to ``SAMPLE_LINES - 1`` that underline the one above (``_SETEXT_RE``) when that one is
    not blank and not indented: found by one newline-led scan of those lines, not a match per line."""
    led = "\n" + "".join(lines[:SAMPLE_LINES])
    count = index = at = 0
    for found in _SETEXT_LED_RE.finditer(led):
        start = found.start()
        index += led.count("\n", at, start)
        at = start
        above = lines[index - 1] if index else ""
        count += bool(above.strip()) and not above.startswith(" ")
    return count


def _markdown(sample: str, lines: list[str], outside: str) -> Format | None:
    headings = len(_HEADING_LED_RE.findall("\n" + outside))
    headings += _setext_headings(lines)
    if (
        headings < 2
        or len(list(islice(_MARKDOWN_SIGNS_RE.finditer(sample), 2))) < 2
        or sample.startswith("#!")
    ):
        return None
    body = list(filter(str.strip, outside.split("\n")))
    hashed = sum(map(str.startswith, body, repeat("#")))
    if hashed > 0.3 * len(body) or _code_ends(outside) > 0.05 * len(body):
        return None  # a script's comments are not headings
    return Format("markdown", "Markdown")


_LOG_LINE_RE = re.compile(
    r"^[\[(]?(?:\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}|\d{2}:\d{2}:\d{2}|[A-Z][a-z]{2} [ \d]\d \d{2}:\d{2}:\d{2}"
    r"|\d{10}(?:\.\d+)?\b|(?:TRACE|DEBUG|INFO|NOTICE|WARN|WARNING|ERROR|CRITICAL|FATAL|PANIC)\b)"
)
_DIGITS = str.maketrans("0123456789", "##########")


def shape(text: str) -> str:
    """``text`` with every digit masked: log lines that differ only in their numbers (of the same
    widths: timestamps, most ids) are alike. A translation, not a regex: C speed on 50 MB logs."""
    return text.translate(_DIGITS)


def _log(lines: list[str]) -> Format | None:
    body = list(filter(str.strip, lines[: SAMPLE_LINES * 5]))
    if len(body) < 20:
        return None
    if few_fail(body[:SAMPLE_LINES], _LOG_LINE_RE.match, 0.4):
        return Format("log", "log")
    long = [line for line in body if len(line.strip()) >= 12]  # a lone "}" repeats in any code
    # Without timestamps, only exact repeats count: lines that differ in a number (file_0001.txt,
    # file_0002.txt) are a listing, and every one of them says something.
    if len(long) >= 0.5 * len(body) and len(set(long)) <= 0.7 * len(long):  # 3 in 10 repeat one above
        return Format("repeats", "repetitive text")
    return None


# ------------------------------------------------------------------------------------------- detect
def detect(text: str, lines: list[str]) -> Format | None:
    """The format of ``text`` (``lines`` is its ``split_lines``), or None when unsure."""
    sample = text[: 256 * 1024]
    sample_lines = lines[: SAMPLE_LINES * 5]
    if len(lines) < 3 or max(map(len, sample_lines)) > MAX_LINE:
        return None
    led = "\n" + sample
    if _HUNK_M_RE.search(led) and (_DIFF_GIT_RE.search(led) or _FILE_PAIR_RE.search(led)):
        if _diff_start(sample_lines) and _diff_ok(sample_lines):
            return Format("diff", "unified diff")
        return None
    # a log's first commit header is on one of its first three lines (the text's start: no line in the
    # sample is longer than MAX_LINE)
    first = _COMMIT_M_RE.search("".join(sample_lines[:3]))
    if first is not None and _AFTER_COMMIT_RE.match(sample, first.end()) is not None:
        return Format("gitlog", "git log")
    head = list(filter(str.strip, sample_lines[:SAMPLE_LINES]))
    if len(head) >= 5 and few_fail(head, _ONELINE_RE.match, 0.05):
        return Format("oneline", "git log")
    kind = lock_kind(sample_lines)
    if kind is not None:
        return Format("lock", LABELS[kind], "lock-" + kind)
    head_sample = sample[: 16 * 1024]  # (what the whole-text regexes of code and Markdown read)
    outside = _unfenced(head_sample)  # (code and Markdown both look outside the fences)
    return (
        _table(lines)
        or _code(head_sample, outside)
        or _config(lines)
        or _markdown(head_sample, lines, outside)
        or _log(lines)
    )
