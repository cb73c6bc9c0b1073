"""Retention cleanup of a recovery directory (``mcpsqueeze clean`` and the proxies' hourly job): only our own
two kinds of names, directly in the directory, through one no-follow directory fd; a file that vanishes
under us (another cleanup) is not an error.
"""

from __future__ import annotations

import math
import os
import re
import stat
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from mcpsqueeze._errors import UsageError

from ._files import open_private_dir
from ._ids import FINAL_NAME_RE, TMP_NAME_RE

__all__ = [
    "CleanReport",
    "clean_directory",
    "parse_duration",
    "parse_size",
]

# A .tmp file is still being written until it is at least this old.
TMP_GRACE = 3600.0


@dataclass
class CleanReport:
    """What a cleanup deleted (or would delete, for a dry run) and what it left."""

    deleted: list[str] = field(default_factory=list)
    bytes_freed: int = 0
    kept: int = 0
    kept_bytes: int = 0
    errors: list[str] = field(default_factory=list)
    dry_run: bool = False


@dataclass(frozen=True, slots=True)
class _Candidate:
    name: str
    size: int
    mtime: float
    is_tmp: bool
    dev_ino: tuple[int, int]


def clean_directory(
    directory: Path,
    max_age: float | None,
    max_bytes: int | None = None,
    dry_run: bool = False,
    now: float | None = None,
) -> CleanReport:
    """Delete recovery files older than ``max_age`` seconds (None: none), then the oldest until ``max_bytes``
    fits (a cap is a promise about disk use). Only regular ``mcpsqueeze-<id>.json`` and
    ``.mcpsqueeze-<id>.json.tmp`` files count; a ``.tmp`` goes only when older than max(1 hour, max_age)."""
    now = time.time() if now is None else now
    path = Path(os.path.abspath(directory))
    report = CleanReport(dry_run=dry_run)
    dir_fd = open_private_dir(path)
    try:
        # Oldest first, so both the report and the size cap read in deletion order.
        candidates = sorted(_scan(dir_fd, report), key=lambda c: (c.mtime, c.name))
        final_age = math.inf if max_age is None else max_age
        tmp_age = TMP_GRACE if max_age is None else max(TMP_GRACE, max_age)
        doomed: list[_Candidate] = []
        remaining: list[_Candidate] = []
        for cand in candidates:
            limit = tmp_age if cand.is_tmp else final_age
            (doomed if now - cand.mtime > limit else remaining).append(cand)
        if max_bytes is not None:
            total = sum(c.size for c in remaining)
            survivors: list[_Candidate] = []
            for cand in remaining:
                if total > max_bytes and not cand.is_tmp:
                    doomed.append(cand)
                    total -= cand.size
                else:
                    survivors.append(cand)
            remaining = survivors
        for cand in doomed:
            outcome = "deleted" if dry_run else _delete(dir_fd, cand, report)
            if outcome == "deleted":
                report.deleted.append(cand.name)
                report.bytes_freed += cand.size
            elif outcome == "kept":
                remaining.append(cand)
        report.kept = len(remaining)
        report.kept_bytes = sum(c.size for c in remaining)
    finally:
        os.close(dir_fd)
    return report


def _scan(dir_fd: int, report: CleanReport) -> list[_Candidate]:
    found: list[_Candidate] = []
    with os.scandir(dir_fd) as entries:
        for entry in entries:
            is_tmp = bool(TMP_NAME_RE.match(entry.name))
            if not (is_tmp or FINAL_NAME_RE.match(entry.name)):
                continue
            try:
                st = os.stat(entry.name, dir_fd=dir_fd, follow_symlinks=False)
            except FileNotFoundError:
                continue  # Another cleanup, or a rename, got there first.
            except OSError as exc:
                report.errors.append(f"{entry.name}: {exc.strerror}")
                continue
            if stat.S_ISREG(st.st_mode):
                found.append(_Candidate(entry.name, st.st_size, st.st_mtime, is_tmp, (st.st_dev, st.st_ino)))
    return found


def _delete(dir_fd: int, cand: _Candidate, report: CleanReport) -> Literal["deleted", "gone", "kept"]:
    """Unlink one file only if it is still the regular file we judged."""
    try:
        st = os.stat(cand.name, dir_fd=dir_fd, follow_symlinks=False)
        same = (st.st_dev, st.st_ino) == cand.dev_ino and st.st_mtime == cand.mtime
        if not (stat.S_ISREG(st.st_mode) and same):
            return "kept"  # Replaced or rewritten since the scan: judge it again next time.
        os.unlink(cand.name, dir_fd=dir_fd)
    except FileNotFoundError:
        return "gone"  # Another cleanup got there first; that is its deletion, not ours.
    except OSError as exc:
        report.errors.append(f"{cand.name}: {exc.strerror}")
        return "kept"
    return "deleted"


_DURATION_UNITS = {"w": 604800.0, "d": 86400.0, "h": 3600.0, "m": 60.0, "s": 1.0}
_NUMBER = r"[0-9]+(?:\.[0-9]+)?"
_DURATION_PART_RE = re.compile(rf"({_NUMBER})([wdhms])")
_DURATION_RE = re.compile(rf"^(?:{_NUMBER}[wdhms])+\Z")
_PLAIN_RE = re.compile(rf"^{_NUMBER}\Z")


def parse_duration(text: str) -> float:
    """Seconds from "24h", "90m", "30s", "7d", "2w", "1h30m" or plain seconds."""
    cleaned = text.strip().lower()
    if _PLAIN_RE.match(cleaned):
        return float(cleaned)
    if _DURATION_RE.match(cleaned):
        parts = _DURATION_PART_RE.findall(cleaned)
        units = [unit for _, unit in parts]
        if len(set(units)) == len(units):
            return sum(float(number) * _DURATION_UNITS[unit] for number, unit in parts)
    raise UsageError(
        f"Cannot read {text!r} as a duration; use a number of seconds or units like 30s, 90m, 24h, 7d, 1h30m."
    )


_SIZE_UNITS = {"": 1, "b": 1} | {
    f"{unit}{suffix}": base**power  # k and kib: 1024; kb: 1000
    for power, unit in enumerate("kmgt", 1)
    for suffix, base in (("", 1024), ("ib", 1024), ("b", 1000))
}
_SIZE_RE = re.compile(rf"^({_NUMBER})\s*([a-z]*)\Z")


def parse_size(text: str) -> int:
    """Bytes from "1G", "512M", "10k", "1GiB", "1GB" or plain bytes: K/M/G/T and KiB... are powers of 1024,
    KB/MB/GB/TB of 1000 (as GNU coreutils)."""
    match = _SIZE_RE.match(text.strip().lower())
    if match and match.group(2) in _SIZE_UNITS:
        return int(float(match.group(1)) * _SIZE_UNITS[match.group(2)])
    raise UsageError(
        f"Cannot read {text!r} as a size; use a number of bytes or units like 10k, 512M, 1G, 1GiB, 1GB."
    )
