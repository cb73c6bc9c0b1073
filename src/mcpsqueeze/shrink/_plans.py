"""Per-format plans: which lines of a text an outline shows, most valuable first.

A plan lists line indexes in tiers. The first tier holds the landmarks an agent navigates by (every
definition line, every file and hunk header, every commit header and subject, section headers and
package names, headings); later tiers add what explains them (signatures, the head, the first
changed lines of each hunk, a sample of rows). ``fill`` lines come last and only while the preview
is small (see ``_outline``). Lines matching the call's own arguments go right after the landmarks,
and landmarks that match go first, so a cut never hides what the agent searched for.
"""

from __future__ import annotations

import csv
import re
from bisect import bisect_left, bisect_right
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import cache, cached_property
from itertools import accumulate, chain, compress, count, islice, pairwise, repeat, zip_longest
from operator import itemgetter, not_

from mcpsqueeze.shrink._formats import (
    COMMIT,
    COMMIT_RE,
    HEADING_RE,
    HUNK_RE,
    LANGUAGES,
    SECTION_RE,
    YAML_KEY_RE,
    Format,
    requirement,
    shape,
)
from mcpsqueeze.shrink._locks import packages, yarn_head
from mcpsqueeze.shrink._unusual import MATCHES, rare_word_scores, standouts, unusual_records

__all__ = ["FOLD_LINES", "Plan", "plan_for"]

#: The most lines a fold marker stands for when its lines have structure of their own (a line
#: followed by a more indented one): a larger block shows its inner landmarks instead, so that every
#: fold is cheap to open. 120 lines are about 1,000-1,500 tokens of code.
FOLD_LINES = 120

_SHORT_HEAD = 8  # ... of a config file, a Markdown text
_SIGNATURE = 6  # continuation lines of a definition whose signature spans lines
_HUNK_VALUE = 6  # changed lines of each hunk the plan values
_SAMPLE_ROWS = 20  # rows of a table
_SAMPLE_LINES = 24  # lines of plain text sampled evenly
_SENTENCES_MOST = 4 * 1024 * 1024  # the characters of wrapped prose whose sentences are compared


@dataclass
class Plan:
    """Tiers of line indexes (best first), the fill, and the words a fold marker adds."""

    label: str
    tiers: list[list[int]]
    fill: Callable[[], Sequence[int]] = tuple  # made when reached: most outlines of a big text are full first
    describe: Callable[[int, int], str] = field(default=lambda a, b: "")
    landmarks: list[int] = field(default_factory=list)
    detail: int = 0  # the most characters ``describe`` writes, with this many digits per number
    indent: bool = True  # markers take the indentation of what they fold (code, config, prose)
    # lines shown beside the landmarks, worth their room as much: the inner landmarks of large
    # blocks (``_with_nested``), the first sentence under each Markdown heading
    inner: list[int] = field(default_factory=list)
    # a fold never spans one of these line indexes (each package of a lock file is its own marker)
    breaks: list[int] = field(default_factory=list)
    query: list[int] = field(default_factory=list)  # the lines the call's own words match, best first


class _Text:
    """The lines of a text, and the text with a newline in front (``led``) for whole-text scans by
    patterns that start with ``\n`` where a line-by-line pattern would start with ``^``: the regex
    engine finds the newlines in C, and a match's line is the count of newlines before it."""

    def __init__(self, lines: Sequence[str], text: str) -> None:
        self.lines = lines
        self.text = text

    @cached_property
    def led(self) -> str:
        return "\n" + self.text

    def scan(self, pattern: re.Pattern[str]) -> Iterator[tuple[int, re.Match[str]]]:
        """(line index, match) for each line that starts with a match of ``pattern`` (which starts
        with ``\n`` and does not match across a line end), in order."""
        led = self.led
        index = at = 0
        for match in pattern.finditer(led):
            start = match.start()
            index += led.count("\n", at, start)
            at = start
            yield index, match

    def matching(self, pattern: re.Pattern[str]) -> list[int]:
        """Indexes of the lines that start with a match of ``pattern`` (see ``scan``)."""
        return [index for index, _ in self.scan(pattern)]


def _front(ranked: Sequence[int], chosen: Sequence[int]) -> list[int]:
    """``chosen`` with the ones the query ranked moved to the front, best first."""
    wanted = set(chosen)
    first = [i for i in ranked if i in wanted]
    taken = set(first)
    return first + [i for i in chosen if i not in taken]


def _query_tier(ranked: Sequence[int], n: int) -> list[int]:
    """The matching lines, then one line of context on each side of the best ten."""
    around = [j for i in ranked[:10] for j in (i - 1, i + 1) if 0 <= j < n]
    return list(ranked) + around


def _first_nonblank_after(lines: Sequence[str], index: int, limit: int = 4) -> list[int]:
    for j in range(index + 1, min(len(lines), index + 1 + limit)):
        if lines[j].strip():
            return [j]
    return []


# ------------------------------------------------------------------------------ nested outline
def indent_depth(line: str) -> int | None:
    """The indentation of ``line`` in columns (a tab is 4), or None for a blank line."""
    body = line.lstrip(" \t")
    if not body.strip():
        return None
    lead = line[: len(line) - len(body)]
    return len(lead) + 3 * lead.count("\t")


_OPENS = (":", "{", "(", "[", "=>")  # how a line that opens a block of code ends


def _with_nested(
    plan: Plan, lines: Sequence[str], depth: Callable[[str], int | None], code: bool = False
) -> Plan:
    """``plan`` with the nested outline of its long runs as its second tier (right after the
    landmarks) and in ``inner``: the inner landmarks of the runs between the lines it keeps that are
    longer than ``FOLD_LINES``. In each, the outermost lines that open an indented block (every one of
    them, or the fewest that cut it into short runs when there are many), then the same inside each run
    still too long. A run without such a line (flat: a list, a data table, the end of a block) stays
    whole. In ``code`` (and diffs of it), lines that end as a block opens (``_OPENS``) are preferred."""
    n = len(lines)
    if n > 200_000:
        return plan  # (no preview could show the nested outline of a longer text)
    inner: list[int] = []
    edges = [-1, *sorted({*plan.landmarks, *plan.inner}), n]
    stack = [(x + 1, y) for x, y in pairwise(edges) if y - x - 1 > FOLD_LINES]
    while stack:
        a, b = stack.pop()
        openers: list[tuple[int, int]] = []  # (index, depth) of each line the next non-blank one is under
        previous: tuple[int, int] | None = None
        for i in range(a, b):
            d = depth(lines[i])
            if d is None:
                continue
            if previous is not None and d > previous[1]:
                openers.append(previous)
            previous = (i, d)
        if not openers:
            continue
        if code:  # a line that ends as a block opens (not prose running on under a docstring line)
            openers = [o for o in openers if lines[o[0]].rstrip().endswith(_OPENS)] or openers
        level = min(d for _, d in openers)
        chosen = [i for i, d in openers if d == level]
        if len(chosen) > max(8, (b - a) // 15):
            # the fewest that cut ``a..b-1`` into runs of at most ``FOLD_LINES`` lines where they allow it:
            # each is kept when skipping it would make the run from the last kept line to the next too long
            kept: list[int] = []
            start = a
            for c, after in zip(chosen, [*chosen[1:], b], strict=True):
                if after - start > FOLD_LINES:
                    kept.append(c)
                    start = c + 1
            chosen = kept
        inner.extend(chosen)
        cuts = [a - 1, *chosen, b]
        stack.extend((x + 1, y) for x, y in pairwise(cuts) if y - x - 1 > FOLD_LINES)
    if inner:
        inner.sort()
        plan.tiers.insert(1, inner)
        plan.inner = sorted({*plan.inner, *inner})
    return plan


# ---------------------------------------------------------------------------------------------- code
#: JavaScript/TypeScript test names: describe/it/test calls (with .each, .only, .skip ...).
_JS_TEST_RE = re.compile(r"\n[ \t]*+(?:describe|it|test)(?:\.\w+)*[ \t]*\(", re.M)
_OPENS_BODY = (":", "{", ";", "=>", "}")


def _code(fmt: Format, t: _Text, ranked: Sequence[int]) -> Plan:
    lines = t.lines
    language = LANGUAGES[fmt.language]
    n = len(lines)
    definitions = t.matching(language.definition)
    if fmt.language == "js":  # test names are landmarks of test files
        tests = t.matching(_JS_TEST_RE)
        if tests:
            definitions = sorted({*definitions, *tests})
    depths = [len(line) - len(line.lstrip(" \t")) for line in map(lines.__getitem__, definitions)]
    by_depth = [d for _, d in sorted(zip(depths, definitions, strict=True))]
    signatures: list[int] = []
    bodies: list[int] = []
    for d in definitions:
        end = d
        while end - d < _SIGNATURE and end + 1 < n and not lines[end].rstrip().endswith(_OPENS_BODY):
            end += 1
            signatures.append(end)
        back = d - 1
        while back >= 0 and d - back <= 3 and lines[back].lstrip().startswith(("@", "#[", "#!")):
            signatures.append(back)  # decorators and attributes belong to the definition
            back -= 1
        bodies += _first_nonblank_after(lines, end)  # the first line of the body
    plan = Plan(
        fmt.label,
        [
            _front(ranked, by_depth),
            signatures,
            _query_tier(ranked, n),
            list(range(min(20, n))),  # the head: a module docstring and its imports
            bodies,
        ],
        fill=lambda: range(n),
        landmarks=definitions,
    )
    return _with_nested(plan, lines, indent_depth, code=True)


# ------------------------------------------------------------------------------------ diffs and logs
_FILE_HEADER = (
    r"diff --git |diff --cc |--- (?:a/|/dev/null)|\+\+\+ (?:b/|/dev/null)|new file mode "
    r"|deleted file mode |rename (?:from|to) |similarity index |Binary files "
)
_FILE_HEADER_RE = re.compile(f"^(?:{_FILE_HEADER})")
# The lines COMMIT_RE matches (its $ ends the line), led by \n, and a look ahead at the usual shapes
# that follow: Author, Date, then mcp-server-git's Message line (group 1) or git's blank line and
# indented subject (group 2). A diff's commit headers and index lines are found in one scan.
_COMMIT_LINE = COMMIT + r"(?:(?=\nAuthor:[^\n]*\nDate:[^\n]*\n(?:(Message: )|(\n)    [^\n]*?\S)))?"
_COMMIT_LINE_RE = re.compile(r"\n" + _COMMIT_LINE, re.M)
_COMMIT_OR_INDEX_RE = re.compile(r"\n(?:" + _COMMIT_LINE + r"|index [0-9a-f]+\.\.[0-9a-f]+)", re.M)


def _commits(
    lines: Sequence[str], found: Iterable[tuple[int, re.Match[str]]]
) -> tuple[list[int], list[int], list[int]]:
    """(commit header and subject indexes, interleaved; the Author/Date lines; the header indexes).
    ``found``: each commit header's index and the match of ``_COMMIT_LINE``."""
    landmarks: list[int] = []
    details: list[int] = []
    heads: list[int] = []
    n = len(lines)
    for h, match in found:
        heads.append(h)
        landmarks.append(h)
        if match.lastindex:  # a usual shape: what the scan below finds for it, without its loop
            details += (h + 1, h + 2)
            landmarks.append(h + 3 if match.lastindex == 1 else h + 4)
            continue
        for j in range(h + 1, min(n, h + 8)):
            line = lines[j]
            if line.startswith(("Author:", "Date:", "Merge:", "AuthorDate:", "CommitDate:", "Commit:")) and (
                not line.startswith("Commit: ") or not COMMIT_RE.match(line)
            ):
                details.append(j)
                continue
            if line.startswith("Message: ") or (line.startswith("    ") and line.strip()):
                landmarks.append(j)
                break
            if line.strip():
                break
    return landmarks, details, heads


# Lines a diff's scan stops at: hunk headers (checked with HUNK_RE) and the file header lines.
_DIFF_LINE_RE = re.compile(f"\n(?:@@ -|{_FILE_HEADER})")
# A hunk line's kind by its first character: 3 removed, 2 added, 0 "\ No newline", 1 anything else.
_KINDS = bytes(3 if c == 45 else 2 if c == 43 else 0 if c == 92 else 1 for c in range(256))
_CHANGED_RE = re.compile(rb"[\x02\x03]")
_UNCHANGED_RE = re.compile(rb"\x01")


def _hunk_end(heads: bytes, a: int, old: int, new: int) -> int:
    """Where the hunk whose lines start at ``a`` ends: at the first line by which it has consumed
    ``old`` old-side (context or removed) and ``new`` new-side (context or added) lines, or the end.
    A line takes at most one from each count, so the end is at least the larger count left away:
    jump there and count again (a few C ``count`` calls instead of a loop over the lines)."""
    n = len(heads)
    b = min(n, a + max(old, new, 0))
    at = a
    minus = plus = other = 0
    while True:
        minus += heads.count(45, at, b)  # "-"
        plus += heads.count(43, at, b)  # "+"
        other += heads.count(92, at, b)  # "\"
        at = b
        context = (b - a) - minus - plus - other
        old_left, new_left = old - minus - context, new - plus - context
        if (old_left <= 0 and new_left <= 0) or b >= n:
            return b
        b = min(n, b + max(old_left, new_left))


def _diff(fmt: Format, t: _Text, ranked: Sequence[int]) -> Plan:
    lines = t.lines
    n = len(lines)
    kinds = bytearray(n)  # 0 other, 1 unchanged, 2 added, 3 removed
    heads = "".join(map(itemgetter(0), lines)).encode("latin-1", "replace")  # each line's first character
    files: list[int] = []  # diff --git lines, or ---/+++ where there is none (mcp-server-git's git_show)
    headers: list[int] = []  # mode, rename, binary lines (not ---/+++ under diff --git)
    named = False
    hunks: list[int] = []
    spans: list[tuple[int, int]] = []  # each hunk's lines
    value: list[list[int]] = []  # the first changed lines of each hunk
    led = t.led
    at = index = 0  # led[at] is the newline in front of line ``index``
    after = 0  # where the next header may start (after a hunk: its lines are not looked at)
    while True:
        found = _DIFF_LINE_RE.search(led, after)
        if found is None:
            break
        start = found.start()
        index += led.count("\n", at, start)
        at, i = start, index
        line = lines[i]
        match = HUNK_RE.match(line)
        if match is None:
            if line.startswith(("diff --git ", "diff --cc ")):
                files.append(i)
                named = True  # its ---/+++ lines repeat the paths: details, not landmarks
            elif _FILE_HEADER_RE.match(line):
                if not named:
                    files.append(i)
                elif not line.startswith(("--- ", "+++ ")):  # those repeat the diff --git line's paths
                    headers.append(i)
            after = at + 1
            continue
        hunks.append(i)
        named = False
        old = 1 if match.group(2) is None else int(match.group(2))
        new = 1 if match.group(4) is None else int(match.group(4))
        end = _hunk_end(heads, i + 1, old, new)
        kinds[i + 1 : end] = heads[i + 1 : end].translate(_KINDS)
        spans.append((i + 1, end))
        value.append([m.start() for m in islice(_CHANGED_RE.finditer(kinds, i + 1, end), _HUNK_VALUE)])
        at += sum(map(len, lines[i:end]))  # to the newline in front of line ``end``
        index, after = end, at
    indexes: list[int] = []
    headers_at: list[tuple[int, re.Match[str]]] = []
    for i, match in t.scan(_COMMIT_OR_INDEX_RE):
        if lines[i][0] == "i":
            indexes.append(i)
        else:
            headers_at.append((i, match))
    commits, details, _heads = _commits(lines, headers_at)  # git show, git log -p
    landmarks = sorted([*files, *hunks, *commits])
    priority = [*commits, *files, *hunks]  # the file list first when not every header fits

    def describe(a: int, b: int) -> str:
        """A fold's words, as diffstat counts them: ``+12 -20`` (lines added, removed); the rest of the
        range is context or file headers. A fold of context only says ``unchanged``."""
        part = kinds[a:b]
        added, removed = part.count(2), part.count(3)
        words = " ".join(w for w in (f"+{added}" if added else "", f"-{removed}" if removed else "") if w)
        if not words and part.count(1) == b - a:
            return "unchanged"
        return words

    def rest() -> list[int]:
        """The fill: the other changed lines of each hunk, round-robin, then the unchanged ones."""
        changed = [[m.start() for m in _CHANGED_RE.finditer(kinds, a, b)][_HUNK_VALUE:] for a, b in spans]
        unchanged = [[m.start() for m in _UNCHANGED_RE.finditer(kinds, a, b)] for a, b in spans]
        return _round_robin(changed) + _round_robin(unchanged)

    plan = Plan(
        fmt.label,
        [
            _front(ranked, priority),
            _query_tier(ranked, n),
            [0, *details],
            headers,
            _round_robin(value),
            indexes,
        ],
        fill=cache(rest),
        describe=describe,
        landmarks=landmarks,
        detail=14,  # "+12345 -12345"
        indent=False,
    )
    # a hunk line's depth is its content's, after the ``+``/``-``/space prefix
    return _with_nested(
        plan, lines, lambda line: indent_depth(line[1:]) if line[:1] in ("+", "-", " ") else None, code=True
    )


def _round_robin(groups: list[list[int]]) -> list[int]:
    """The first of each group, then the second of each, and so on: in phases between the groups'
    lengths, each one ``zip`` of the groups still that long (one hunk of a new file can have 20,000
    lines; a phase per distinct length keeps this linear in the lines)."""
    out: list[int] = []
    active = [g for g in groups if g]
    k = 0
    while active:
        if len(active) == 1:
            out.extend(active[0][k:])
            break
        m = min(map(len, active))
        out.extend(chain.from_iterable(zip(*[g[k:m] for g in active], strict=True)))
        k = m
        active = [g for g in active if len(g) > m]
    return out


def _gitlog(fmt: Format, t: _Text, ranked: Sequence[int]) -> Plan:
    lines = t.lines
    landmarks, details, heads = _commits(lines, t.scan(_COMMIT_LINE_RE))
    n = len(lines)
    subjects = set(landmarks)  # every commit header is one, so no line of theirs is a body line
    headers = set(heads)
    bodies = [  # two lines after each subject (landmarks are in order)
        j
        for i in landmarks
        if i not in headers
        for j in (i + 1, i + 2)
        if j < n and j not in subjects and lines[j].strip()
    ]

    def describe(a: int, b: int) -> str:
        count = bisect_left(heads, b) - bisect_left(heads, a)  # the commit headers a fold holds
        return "" if not count else f"{count} commit{'s' if count != 1 else ''}"

    return Plan(
        fmt.label,
        [_front(ranked, landmarks), _query_tier(ranked, len(lines)), [0, *details], bodies],
        fill=lambda: range(len(lines)),
        describe=describe,
        landmarks=sorted(landmarks),
        detail=12,
        indent=False,
    )


# ------------------------------------------------------------------------------------ config, lock
_NAME_RE = re.compile(r"\n[ \t]*+(?:- )?[\"']?(?:name|version)[\"']?[ \t]*[=:]")


def _config(fmt: Format, t: _Text, ranked: Sequence[int]) -> Plan:
    lines = t.lines
    n = len(lines)
    head = list(range(min(_SHORT_HEAD, n)))
    if fmt.name in ("requirements",):
        every = [i for i, line in enumerate(lines) if requirement(line)]
        return Plan(fmt.label, [_front(ranked, every), _query_tier(ranked, n), head], landmarks=every)
    names = t.matching(_NAME_RE)
    if fmt.name == "toml":
        sections = [i for i, line in enumerate(lines) if SECTION_RE.match(line)]
        second = [j for s in sections for j in _first_nonblank_after(lines, s, 3)]
        deeper: list[int] = []
    elif fmt.name == "yarn":
        sections = [i for i, line in enumerate(lines) if yarn_head(line)]
        names = [i for i, line in enumerate(lines) if line.startswith('  version "')]
        second, deeper = [], []
    else:  # yaml
        sections, second, deeper = [], [], []
        for i, line in enumerate(lines):
            match = YAML_KEY_RE.match(line)
            if match is None:
                continue
            depth = len(match.group(1))
            if depth == 0 and line.rstrip().endswith(":"):
                sections.append(i)
            elif depth <= 2:
                second.append(i)
            else:
                deeper.append(i)
    landmarks = sorted({*sections, *names})
    plan = Plan(
        fmt.label,
        [_front(ranked, [*sections, *names]), _query_tier(ranked, n), head, second, deeper],
        fill=lambda: range(n),
        landmarks=landmarks,
    )
    return _with_nested(plan, lines, indent_depth)


def _lock(fmt: Format, t: _Text, ranked: Sequence[int]) -> Plan:
    """Every package folded into a marker of its own that names it: ``[lines 5-11 folded: serde
    1.0.203]``. Lines the query matched are shown inside their package's block."""
    lines = t.lines
    n = len(lines)
    found = packages(fmt.language.removeprefix("lock-"), lines)
    starts = [p.start for p in found]
    by_start = {p.start: p for p in found}
    breaks = sorted({x for p in found for x in (p.start, p.end) if 0 < x < n})

    def describe(a: int, b: int) -> str:
        first = bisect_left(starts, a)
        last = bisect_left(starts, b)
        count = last - first
        if count == 1 and starts[first] == a:
            package = by_start[a]
            return f"{package.name} {package.version}".strip()
        if count > 1:
            return f"{count} packages, {found[first].name} to {found[last - 1].name}"
        return ""

    # the head (its generator comment, its format version)
    head = [i for i in range(min(4, n)) if not starts or i < starts[0]]
    return Plan(
        fmt.label,
        [_query_tier(ranked, n), head],
        describe=describe,
        breaks=breaks,
        detail=72,
        indent=False,
    )


# ------------------------------------------------------------------------------------- prose, tables
_MARKDOWN_LINE_RE = re.compile(r"\n(?:[ \t]*+(?:```|~~~)|#{1,6}[ \t]+\S|(?:=+|-{2,})[ \t]*$)", re.M)


_SENTENCE_END_RE = re.compile(r"[.!?][\"')\]*_`]*(?:[ \t]|$)")
_BLOCK_START_RE = re.compile(r"^[ \t]*(?:```|~~~|#{1,6}[ \t]|[-*+][ \t]|\d+[.)][ \t]|\||>|<)")
_SENTENCE_LINES = 6  # a first sentence is looked for in this many lines of its paragraph


def _first_sentence(lines: Sequence[str], heading: int, headings: set[int]) -> list[int]:
    """The lines under ``heading`` up to the end of their first sentence: the first paragraph's
    lines until one ends a sentence (at most ``_SENTENCE_LINES``); a list, table, quote or fence
    gives its first line only."""
    first = _first_nonblank_after(lines, heading)
    if not first or first[0] in headings:
        return []
    j = first[0]
    if _BLOCK_START_RE.match(lines[j]):
        return [j]
    out: list[int] = []
    n = len(lines)
    while j < n and len(out) < _SENTENCE_LINES and lines[j].strip() and j not in headings:
        if out and _BLOCK_START_RE.match(lines[j]):
            break
        out.append(j)
        if _SENTENCE_END_RE.search(lines[j].rstrip("\r\n")):
            break
        j += 1
    return out


def _markdown(fmt: Format, t: _Text, ranked: Sequence[int]) -> Plan:
    lines = t.lines
    n = len(lines)
    headings: list[int] = []
    fence: str | None = None
    for i in t.matching(_MARKDOWN_LINE_RE):  # fence, heading and underline lines, found in one scan
        line = lines[i]
        stripped = line.lstrip()
        if stripped.startswith(("```", "~~~")):
            mark = stripped[:3]
            fence = None if fence == mark else (fence or mark)
        elif fence is not None:
            continue
        elif HEADING_RE.match(line):
            headings.append(i)
        elif (
            i > 0
            and lines[i - 1].strip()
            and not lines[i - 1].startswith((" ", "-", "*", "#"))
            and (not headings or headings[-1] != i - 1)
        ):
            headings.extend((i - 1, i))
    marked = set(headings)
    # under a setext heading (title, then its underline), the sentence follows the underline
    sentences = [j for h in headings if h + 1 not in marked for j in _first_sentence(lines, h, marked)]
    plan = Plan(
        fmt.label,
        [_front(ranked, headings), sentences, _query_tier(ranked, n), list(range(min(_SHORT_HEAD, n)))],
        fill=lambda: range(n),
        landmarks=[
            h for h in headings if HEADING_RE.match(lines[h]) or not re.match(r"^[=-]+[ \t]*$", lines[h])
        ],
        inner=sentences,
    )
    return _with_nested(plan, lines, indent_depth)


def _unusual_rows(fmt: Format, lines: Sequence[str], rows: list[int]) -> list[int]:
    """The rows that stand out from the others by their cells (``_unusual``), best first."""
    delimiter = "\t" if fmt.name == "tsv" else ","
    body = [lines[i] for i in rows]
    try:
        columns: Sequence[Sequence[str]] | None = _columns(body, delimiter)
        if columns is None:
            cells = list(csv.reader(body, delimiter=delimiter))
            columns = list(zip_longest(*cells, fillvalue=""))
            records = len(cells)
        else:
            records = len(body)
    except csv.Error:
        return []
    scores = unusual_records(columns, records, cells=True)
    return [rows[k] for k in standouts(scores)]


def _columns(rows: list[str], delimiter: str) -> list[list[str]] | None:
    """The cells of ``rows`` (lines, none blank) column by column, a short row's missing cells empty: what
    ``csv.reader`` reads of them, row by row; None when a quoted cell spans lines or a line holds a
    ``\r`` (``csv.reader`` over them all tells). The rows of the usual width without a quote are
    split at once, as one list cut into columns by slices; the others one by one."""
    if not rows:
        return []
    joined = "".join(rows)
    if "\r" in joined or (
        len(joined) > csv.field_size_limit() and max(map(len, rows)) > csv.field_size_limit()
    ):
        return None
    widths = list(map(str.count, rows, repeat(delimiter)))
    usual = max(Counter(widths).items(), key=itemgetter(1))[0]
    odd = list(compress(count(), map(usual.__ne__, widths)))
    if '"' in joined:
        quoted = compress(count(), map(str.__contains__, rows, repeat('"')))
        odd = sorted({*odd, *quoted})
    if odd:
        plain = list(rows)
        for k in odd:
            plain[k] = delimiter * usual + "\n"
        joined = "".join(plain)
    if not joined.endswith("\n"):
        joined += "\n"
    flat = joined[:-1].replace("\n", delimiter).split(delimiter)
    width = usual + 1
    columns = [flat[k::width] for k in range(width)]
    widest = width if len(odd) < len(rows) else 0
    for k in odd:
        cells = next(csv.reader([rows[k]], delimiter=delimiter), [])
        if any("\n" in cell for cell in cells):
            return None  # (a quoted cell left open: the rows after it are read as part of it)
        widest = max(widest, len(cells))
        columns.extend([""] * len(rows) for _ in range(len(cells) - len(columns)))
        for column, cell in zip(columns, cells, strict=False):
            column[k] = cell
    del columns[widest:]
    return columns


def _table(fmt: Format, t: _Text, ranked: Sequence[int]) -> Plan:
    n = len(t.lines)
    rows = list(compress(range(1, n), map(not_, map(str.isspace, islice(t.lines, 1, None)))))  # not blank
    unusual = _unusual_rows(fmt, t.lines, rows)
    sample = rows[:5] + rows[-3:]
    if len(rows) > 8:
        step = max(1, len(rows) // (_SAMPLE_ROWS - 8))
        sample += rows[5:-3:step][: _SAMPLE_ROWS - 8]
    label = f"{fmt.label} of {len(rows)} rows"

    header = bool(n) and not t.lines[0].isspace()

    def describe(a: int, b: int) -> str:
        if b - a < 5000:  # the lines that are not blank: rows, and the header line
            count = bisect_left(rows, b) - bisect_left(rows, a) + (header and a == 0 < b)
        else:
            count = b - a
        return f"{count} rows" if count != 1 else "1 row"

    return Plan(
        label,
        [[0], [i for i in ranked if i > 0][:MATCHES], unusual, [i for i in ranked if i > 0], sorted(sample)],
        describe=describe,
        detail=12,
        indent=False,
        landmarks=[0],
        inner=sorted(unusual),
    )


_ALARM_RE = re.compile(r"error|fatal|panic|exception|traceback|fail|critical", re.IGNORECASE)
_WARN_RE = re.compile(r"warn", re.IGNORECASE)


def _log(fmt: Format, t: _Text, ranked: Sequence[int]) -> Plan:
    lines = t.lines
    alike = fmt.name == "log"  # a log's lines are alike when they differ only in numbers
    # One translation of the whole text (a digit never spans lines), then split like the lines.
    shapes = shape(t.text).split("\n")[: len(lines)] if alike else list(lines)
    first = dict(zip(reversed(shapes), range(len(shapes) - 1, -1, -1), strict=True))  # its first line
    distinct = sorted(first.values())
    alarms = [i for i in distinct if _ALARM_RE.search(lines[i])]
    warnings = [i for i in distinct if _WARN_RE.search(lines[i])]
    # (the shapes hold the lines' words: lines that differ only in numbers are read once)
    unusual = [i for i in standouts(rare_word_scores(shapes)) if i not in set(alarms)]
    order = [*warnings, *distinct[:30], *reversed(distinct[-30:]), *distinct]

    def describe(a: int, b: int) -> str:
        count = b - a  # (list.count and max compare the lines in C)
        if a > 0 and lines[a:b].count(lines[a - 1]) == count:
            return f"the line above {count} more time{'s' if count != 1 else ''}"
        if a > 0 and shapes[a:b].count(shapes[a - 1]) == count:
            return f"{count} more like the line above"
        if count <= 0 or max(map(first.__getitem__, shapes[a:b])) < a:
            return f"{count} {'like lines' if alike else 'repeats of lines'} shown above"
        return ""

    n = len(lines)
    ends = [  # the latest lines and the first, each unless it only repeats the line before
        i for i in [*range(max(0, n - 10), n), *range(min(n, 3))] if i == 0 or lines[i] != lines[i - 1]
    ]
    return Plan(
        fmt.label,
        [_front(ranked, [*alarms, *unusual]), _query_tier(ranked, n), order, ends],
        describe=describe,
        detail=32,
        indent=False,
        landmarks=alarms,
        inner=sorted(unusual),
    )


_LETTER_RE = re.compile(r"[^\W\d_]")
# Where a sentence of prose ends: at . ! or ? (closing quotes or brackets after it) before a blank and
# what starts a sentence, or at a blank line. Its lines may be wrapped anywhere.
_SENTENCE_BREAK_RE = re.compile(r"[.!?][\"')\]]*\s+(?=[\"'(\[]?[A-Z0-9])|\n[ \t\r]*\n")


def _unusual_lines(t: _Text) -> list[int]:
    """The lines that stand out from the others (``_unusual``), best first: each line on its own, or
    in prose (wrapped anywhere) the lines of each sentence that stands out."""
    lines = t.lines
    # prose: most lines (of a sample) are words, letters three quarters of them or more
    sample = [line for line in islice(lines, 400) if len(line) > 30]
    words = sum(len(_LETTER_RE.findall(line)) * 4 >= len(line.strip()) * 3 for line in sample)
    if not (sample and words * 5 >= len(sample) * 3):
        return standouts(rare_word_scores(lines))
    text = t.text
    end = min(len(text), _SENTENCES_MOST)  # (past it no sentence would be compared: _unusual)
    starts = [0, *(match.end() for match in _SENTENCE_BREAK_RE.finditer(text, 0, end))]
    ends = [*starts[1:], end]
    sentences = [text[a:b] for a, b in zip(starts, ends, strict=True)]
    offsets = list(accumulate(map(len, lines), initial=0))  # where each line starts
    out: list[int] = []
    for k in standouts(rare_word_scores(sentences)):
        first = bisect_right(offsets, starts[k]) - 1
        last = bisect_left(offsets, ends[k]) - 1
        out.extend(range(first, max(first, last) + 1))
    return list(dict.fromkeys(i for i in out if 0 <= i < len(lines)))


def _spread(items: list[int]) -> list[int]:
    """``items`` in the order that halves the gaps: the middle one, then the middles of the two halves,
    and so on; however many of them fit, they are spread evenly."""
    out: list[int] = []
    queue = [(0, len(items))]
    while queue:
        nxt: list[tuple[int, int]] = []
        for a, b in queue:
            if a < b:
                mid = (a + b) // 2
                out.append(items[mid])
                nxt += [(a, mid), (mid + 1, b)]
        queue = nxt
    return out


def _lines(t: _Text, ranked: Sequence[int]) -> Plan:
    """Unrecognised text: the lines that match the query, the lines that stand out from the others
    (``_unusual``), then head and tail."""
    n = len(t.lines)
    unusual = _unusual_lines(t)
    ends: list[int] = []
    head, tail = 0, n - 1
    while head <= tail:
        ends.append(head)
        head += 1
        if head <= tail and head % 2 == 0:
            ends.append(tail)
            tail -= 1
    best = _query_tier(ranked, n)
    # an even sample before the ends: a listing's folds stay short enough to open (each line of it
    # as likely needed as another)
    sample = _spread(list(range(0, n, max(1, n // _SAMPLE_LINES))))
    return Plan("text", [best[:MATCHES], unusual, sample, best, ends], inner=sorted(unusual))


def plan_for(fmt: Format | None, lines: Sequence[str], ranked: Sequence[int], text: str) -> Plan:
    """The plan for ``lines`` (of ``text``) in ``fmt`` (None: the query-led plan of unrecognised text)."""
    t = _Text(lines, text)
    if fmt is None:
        plan = _lines(t, ranked)
    elif fmt.name == "oneline":
        every = list(range(len(lines)))
        plan = Plan(fmt.label, [_front(ranked, every)], landmarks=every, indent=False)
    else:
        plan = _PLANS.get(fmt.name, _log)(fmt, t, ranked)
    plan.query = list(ranked)
    return plan


_PLANS: dict[str, Callable[[Format, _Text, Sequence[int]], Plan]] = {
    "code": _code,
    "diff": _diff,
    "gitlog": _gitlog,
    "toml": _config,
    "yaml": _config,
    "yarn": _config,
    "requirements": _config,
    "lock": _lock,
    "markdown": _markdown,
    "csv": _table,
    "tsv": _table,
}  # (logs and repeated lines: ``_log``)
