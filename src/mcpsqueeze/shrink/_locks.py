"""Lock files: which kind a text is, and where each package's block starts, with its name and version.

A lock file is a long list of packages whose blocks say little beyond ``name version`` (sources,
checksums, hashes, dependency lists). Its outline (``_plans``) folds each package into one marker
that names the package, ``[lines 12-18 folded: serde 1.0.203]``, so every package of a large lock
fits a preview and each one is one exact ``lines`` call away.

Kinds: TOML locks with ``[[package]]`` tables (Cargo.lock, uv.lock, poetry.lock), yarn.lock (v1 and
berry), pnpm-lock.yaml, package-lock.json (v1-v3, as the pretty-printed text npm writes) and go.sum.
Detection is strict, as in ``_formats``: several independent signs, or None.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import chain, pairwise

__all__ = ["LABELS", "SAMPLE_LINES", "Package", "few_fail", "lock_kind", "packages", "yarn_head"]

#: What an outline's header calls each kind.
LABELS = {
    "toml": "lock file",
    "yarn": "yarn lock file",
    "pnpm": "pnpm lock file",
    "npm": "npm lock file",
    "gosum": "go.sum file",
}

SAMPLE_LINES = 400  # lines looked at to decide the kind (and the format: ``_formats``)

_TOML_PACKAGE_RE = re.compile(r"^\[\[package\]\][ \t]*$")
_TOML_NAME_RE = re.compile(r"^name[ \t]*=[ \t]*\"([^\"\n]+)\"")
_TOML_VERSION_RE = re.compile(r"^version[ \t]*=[ \t]*\"([^\"\n]+)\"")
_YARN_VERSION_RE = re.compile(r"^  version:?[ \t]+\"?([^\"\s]+)\"?[ \t]*$")
_PNPM_KEY_RE = re.compile(r"^  ['\"]?(/?[^\s'\"][^\n]*?)['\"]?:[ \t]*(?:\{.*\})?[ \t]*$")
_NPM_ENTRY_RE = re.compile(r"^    \"([^\"\n]*)\": \{[ \t]*$")
_NPM_VERSION_RE = re.compile(r"^      \"version\": \"([^\"\n]+)\"")
_GOSUM_RE = re.compile(r"^(\S+) (v[^\s/]+)(/go\.mod)? h1:\S+=[ \t]*$")


@dataclass(frozen=True, slots=True)
class Package:
    """One package's block: lines ``start`` to ``end - 1`` (0-based), and what the marker names."""

    start: int
    end: int
    name: str
    version: str


def lock_kind(lines: Sequence[str]) -> str | None:
    """``"toml"``, ``"yarn"``, ``"pnpm"``, ``"npm"`` or ``"gosum"``, or None when the text is no lock
    file (or not surely one)."""
    head = list(filter(str.strip, lines[:SAMPLE_LINES]))  # (the non-blank lines, in C)
    if len(head) < 3:
        return None
    first = head[0]
    if few_fail(head, lambda line: bool(_GOSUM_RE.match(line)), 0.02):
        return "gosum"
    if first.startswith("lockfileVersion:") and any(
        line.rstrip() in ("packages:", "importers:") for line in head
    ):
        return "pnpm"
    if first.rstrip() == "{" and any(line.startswith('  "lockfileVersion": ') for line in head[:6]):
        return "npm"
    if (
        any(line.startswith("# yarn lockfile") for line in head[:3])  # v1
        or any(line.rstrip() == "__metadata:" for line in head[:4])  # berry
        or (
            _starting(head, '  version "') >= 3  # v1 without its comment
            and sum(yarn_head(line) for line in head) >= 3
        )
    ):
        return "yarn"
    sample = lines[:SAMPLE_LINES]
    # (each start begins "[[package]]": fewer than two such lines, none of the loop below to run)
    if _starting(sample, "[[package]]") < 2:
        return None
    starts = [i for i, line in enumerate(sample) if _TOML_PACKAGE_RE.match(line)]
    if len(starts) >= 2:
        named = sum(
            any(_TOML_NAME_RE.match(lines[j]) for j in range(s + 1, min(len(lines), s + 3))) for s in starts
        )
        if named >= 0.9 * len(starts):
            return "toml"
    return None


def _starting(lines: Sequence[str], prefix: str) -> int:
    """``sum(map(str.startswith, lines, repeat(prefix)))`` for lines without a newline but at their end
    (and a prefix without one): each line is led by a newline once joined, so one C ``count`` tells."""
    return ("\n" + "\n".join(lines)).count("\n" + prefix)


def few_fail(lines: list[str], ok: Callable[[str], object], share: float) -> bool:
    """At most ``share`` of ``lines`` fail ``ok``; stops at the first failure too many (prose fails
    a config test within a few lines, and these tests run on every text result). ``_formats`` tests its
    config formats, logs and one-line git logs with it too."""
    allowed = int(share * len(lines))
    for line in lines:
        if not ok(line):
            allowed -= 1
            if allowed < 0:
                return False
    return True


def packages(kind: str, lines: Sequence[str]) -> list[Package]:
    """The packages of a lock file of ``kind``, in order (blocks never overlap)."""
    return {"toml": _toml, "yarn": _yarn, "pnpm": _pnpm, "npm": _npm, "gosum": _gosum}[kind](lines)


def _field(lines: Sequence[str], a: int, b: int, pattern: re.Pattern[str]) -> str:
    for j in range(a, b):
        match = pattern.match(lines[j])
        if match:
            return match.group(1)
    return ""


def _toml(lines: Sequence[str]) -> list[Package]:
    out: list[Package] = []
    starts = [
        i for i, line in enumerate(lines) if line.startswith("[[package]]") and _TOML_PACKAGE_RE.match(line)
    ]
    for s, limit in pairwise([*starts, len(lines)]):
        end = limit
        for j in range(s + 1, limit):  # a table that is not the package's own ends it ([metadata])
            line = lines[j]
            if line.startswith("[") and not line.startswith(("[package.", "[[package.")):
                end = j
                break
        name = _field(lines, s + 1, min(end, s + 6), _TOML_NAME_RE)
        if name:
            out.append(Package(s, end, name, _field(lines, s + 1, min(end, s + 8), _TOML_VERSION_RE)))
    return out


def yarn_head(line: str) -> bool:
    """A yarn.lock block's first line: not indented, not a comment, ending in a colon."""
    return bool(line[:1].strip()) and line[:1] != "#" and line.rstrip().endswith(":")


def _yarn(lines: Sequence[str]) -> list[Package]:
    out: list[Package] = []
    heads = [i for i, line in enumerate(lines) if yarn_head(line)]
    for s, end in pairwise([*heads, len(lines)]):
        spec = lines[s].rstrip().rstrip(":").split(",")[0].strip().strip('"')
        if spec == "__metadata":
            continue
        name = spec.rsplit("@", 1)[0] if spec.rfind("@") > 0 else spec
        out.append(Package(s, end, name, _field(lines, s + 1, min(end, s + 4), _YARN_VERSION_RE)))
    return out


def _pnpm(lines: Sequence[str]) -> list[Package]:
    out: list[Package] = []
    section = ""
    entry: tuple[int, str] | None = None
    for i, line in enumerate(chain(lines, ["end"])):  # (a last line that ends the last entry)
        top = bool(line[:1].strip())
        entry_line = not top and line.startswith("  ") and not line.startswith("   ")
        if entry is not None and (top or entry_line):
            key = entry[1].split("(", 1)[0].lstrip("/")  # peer suffixes: foo@1.0.0(react@18.2.0)
            # name@version, or in lockfile v5 /name/version
            name, _, version = key.rpartition("@" if key.rfind("@") > 0 else "/")
            out.append(Package(entry[0], i, name or key, version if name else ""))
            entry = None
        if top:
            section = line.rstrip()
            continue
        if entry_line and section in ("packages:", "snapshots:"):
            match = _PNPM_KEY_RE.match(line)
            if match:
                entry = (i, match.group(1))
    return out


def _npm(lines: Sequence[str]) -> list[Package]:
    out: list[Package] = []
    n = len(lines)
    i = 0
    while i < n:
        match = _NPM_ENTRY_RE.match(lines[i])
        if match is None or not match.group(1):
            i += 1
            continue
        end = i + 1
        while end < n and not lines[end].startswith("    }"):
            end += 1
        end = min(n, end + 1)  # its closing brace is part of the block
        path = match.group(1)
        name = path.rsplit("node_modules/", 1)[-1]
        out.append(Package(i, end, name, _field(lines, i + 1, min(end, i + 4), _NPM_VERSION_RE)))
        i = end
    return out


def _gosum(lines: Sequence[str]) -> list[Package]:
    starts: list[tuple[int, str, str]] = []  # (line, name, version) of each package's first line
    for i, line in enumerate(lines):
        match = _GOSUM_RE.match(line)
        if match is not None and (not starts or starts[-1][1:] != match.group(1, 2)):  # (not its /go.mod)
            starts.append((i, match.group(1), match.group(2)))
    ends = pairwise([*(start[0] for start in starts), len(lines)])
    return [Package(i, end, name, version) for (i, name, version), (_, end) in zip(starts, ends, strict=True)]
