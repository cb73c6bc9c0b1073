"""The fenced code blocks of README.md and docs/*.md, each with the mark on the line before it.

A block is either read by a test, `<!-- snippet: NAME -->` (NAME unique across the docs, and some test
under tests/ names it in quotes), or marked as not runnable here, `<!-- not run: REASON -->`. A page whose
blocks are all of one kind that cannot run (benchmark commands and their measured output) says so once,
on its first line: `<!-- code blocks not run: REASON -->`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FENCE = re.compile(r"^(\s*)(```+)(\S*)\s*$")
SNIPPET = re.compile(r"^\s*<!-- snippet: ([\w-]+) -->\s*$")
NOT_RUN = re.compile(r"^\s*<!-- not run: (.+?) -->\s*$")
PAGE_NOT_RUN = re.compile(r"^<!-- code blocks not run: (.+?) -->\s*$")


@dataclass(frozen=True)
class Block:
    page: str  # relative to the repository root
    line: int  # of the opening fence, 1-based
    lang: str
    text: str  # between the fences, the fences' indentation removed
    snippet: str | None  # the name a test reads it by
    not_run: str | None  # why it is not run here

    @property
    def first_line(self) -> str:
        return self.text.split("\n", 1)[0]


def pages() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def blocks_of(path: Path) -> list[Block]:
    lines = path.read_text(encoding="utf-8").split("\n")
    page_reason = m.group(1) if lines and (m := PAGE_NOT_RUN.match(lines[0])) else None
    found: list[Block] = []
    i = 0
    while i < len(lines):
        opened = FENCE.match(lines[i])
        if not opened:
            if _indented_block_starts(lines, i):  # it cannot carry a mark: the checks ask for a fence
                page = str(path.relative_to(ROOT))
                found.append(Block(page, i + 1, "indented", lines[i].strip(), None, page_reason))
            i += 1
            continue
        indent, fence, lang = opened.groups()
        end = i + 1
        while end < len(lines) and lines[end].strip() != fence:
            end += 1
        body = "\n".join(line.removeprefix(indent) for line in lines[i + 1 : end])
        before = lines[i - 1] if i else ""
        named, reason = SNIPPET.match(before), NOT_RUN.match(before)
        found.append(
            Block(
                page=str(path.relative_to(ROOT)),
                line=i + 1,
                lang=lang,
                text=body,
                snippet=named.group(1) if named else None,
                not_run=reason.group(1) if reason else (None if named else page_reason),
            )
        )
        i = end + 1
    return found


def _indented_block_starts(lines: list[str], i: int) -> bool:
    """An indented code block opens here: four spaces after a blank line that follows a paragraph (not
    a list item or its continuation)."""
    if not lines[i].startswith("    ") or not lines[i].strip() or i < 2 or lines[i - 1].strip():
        return False
    before = next((line for line in reversed(lines[:i]) if line.strip()), "")
    return not re.match(r"^\s|^([-*+]|\d+\.) ", before)


@cache
def all_blocks() -> tuple[Block, ...]:
    return tuple(block for page in pages() for block in blocks_of(page))


def snippet(name: str) -> Block:
    """The one block marked `<!-- snippet: NAME -->`, wherever it is."""
    (found,) = [b for b in all_blocks() if b.snippet == name]
    return found
