"""What an agent's model reads, call by call: the one rendering the demo prints and the README shows.

Each step is a tool call as the model made it (`→ tool {arguments}`), a note on what came back
(`← ...:`), then the text the model read, line for line, cut after `max_lines` with a count of the rest.
Pure: text in, text out.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

__all__ = ["Step", "render_steps", "shown_lines"]


@dataclass(frozen=True)
class Step:
    tool: str
    arguments: dict[str, Any]
    note: str  # what came back, in words: sizes and token counts
    shown: str  # the text the model read
    max_lines: int


def shown_lines(text: str) -> list[str]:
    """The text's lines as the model reads them (a last newline ends a line, it opens none)."""
    return text.removesuffix("\n").split("\n")


def render_steps(steps: list[Step]) -> str:
    out: list[str] = []
    for step in steps:
        call = json.dumps(step.arguments, ensure_ascii=False, separators=(",", ":"))  # as the hints write it
        out += [f"→ {step.tool} {call}", f"← {step.note}:"]
        lines = shown_lines(step.shown)
        out += lines[: step.max_lines]
        if len(lines) > step.max_lines:
            rest = len(lines) - step.max_lines
            out.append(f"⋮ {rest} more line{'s' if rest != 1 else ''}")
    return "\n".join(out)
