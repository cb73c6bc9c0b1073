"""Per-tool policies: which stages run, and with what budget, for one `server:tool`. Pure.

A `Policy` is the resolved answer for one call; its fields are the per-tool rows of the table of settings. A
config file's rules refine the session's `Policy`, matched by glob on `server:tool` in file order (a later
rule wins key by key). The pipeline resolves it once per call; the stages only read it.
"""

from __future__ import annotations

import dataclasses
import fnmatch
import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from .._errors import UsageError
from ._kinds import Boolean, Text, Whole
from ._knobs import knob

__all__ = [
    "DEFAULT_BUDGET",
    "MIN_BUDGET",
    "Policy",
    "PolicyRule",
    "PolicySet",
    "pattern_matches",
]

DEFAULT_BUDGET = 20_000
DEFAULT_SHRINK_ABOVE = 6000  # results over this get a preview sized by value (docs/previews.md)
MIN_BUDGET = 1024
MIN_TRUNCATE_CHARS = 256  # the smallest block that still holds a useful preview next to its marker


def _valid_query(value: str) -> None:
    from .._projection import compile_query

    try:
        compile_query(value)
    except UsageError as exc:
        raise ValueError(str(exc)) from None


@dataclass(frozen=True)
class Policy:
    """What the stages do for one call (each field a row of the table of settings)."""

    budget: int = knob(
        DEFAULT_BUDGET,
        Whole(MIN_BUDGET, 1 << 40, unit="characters"),
        "Character budget for each tool result's text, notice included.",
        alias="--shrinkfit",  # mcp-compressor's spelling (a bare --shrinkfit is the default budget)
    )
    shrink: bool = knob(True, Boolean(), "Never shrink results.", flag="--no-shrink", switch=False)
    dedup: bool = knob(
        True, Boolean(), "Never replace repeated results with a pointer.", flag="--no-dedup", switch=False
    )
    truncate_chars: int | None = knob(  # a cap on each text block as well (None: the budget only)
        None,
        Whole(
            MIN_TRUNCATE_CHARS,
            1 << 40,
            unit="characters",
            off=True,
            off_means="no per-block cap",
            none_text="none",
        ),
        "Also cap each text block at N characters, its marker and the recovery notice included (MCP "
        f"Squeeze compatible; at least {MIN_TRUNCATE_CHARS}). With --budget, the stricter applies.",
    )
    shrink_above: int | None = knob(  # results over this get a preview sized by value (None: the budget only)
        DEFAULT_SHRINK_ABOVE,
        Whole(0, 1 << 40, unit="characters", off=True, off_means="the budget only"),
        "Results over N characters get a preview sized by value (landmarks, field names, counts; at most "
        "the budget) even when they fit the budget; 'off': only results over the budget shrink.",
    )
    toonify: bool = knob(  # show JSON results that are not shrunk as TOON
        False,
        Boolean(),
        "Show JSON results that are not shrunk as TOON (mcp-compressor compatible); the original JSON "
        "stays recoverable byte for byte.",
        switch=True,
    )
    query: str | None = knob(  # a JMESPath projection of JSON results, applied before shrinking
        None,
        Text(
            metavar="JMESPATH",
            valid=_valid_query,
            off=True,
            wanted="a JMESPath expression such as issues[].{key: key}, or false for none",
        ),
        "A JMESPath projection of every JSON result, applied before shrinking (usually a per-tool "
        "policy; the original stays recoverable).",
        flag=None,
    )
    drop_duplicate_structured: bool = knob(  # drop structuredContent equal to the text (hides outputSchema)
        False,
        Boolean(),
        "For clients that show structuredContent to the model: drop it when it repeats the text, and "
        "hide those tools' outputSchema. The original stays recoverable. Off: never modified.",
        switch=True,
    )


def pattern_matches(pattern: str, server: str, tool: str) -> bool:
    """`server:tool` globs (fnmatch, case-sensitive); a pattern without `:` matches the tool alone."""
    if ":" in pattern:
        return fnmatch.fnmatchcase(f"{server}:{tool}", pattern)
    return fnmatch.fnmatchcase(tool, pattern)


@dataclass(frozen=True)
class PolicyRule:
    """One `[policies."GLOB"]` table: the keys it sets, and where it was written (for `config`)."""

    pattern: str
    values: Mapping[str, Any]
    source: str = ""  # "path:line" of the table header


@dataclass(frozen=True)
class PolicySet:
    """The rules of a config file, in file order."""

    rules: tuple[PolicyRule, ...] = ()

    def resolve(self, base: Policy, server: str, tool: str) -> Policy:
        changes: dict[str, Any] = {}
        for rule in self.rules:
            if pattern_matches(rule.pattern, server, tool):
                changes.update(rule.values)
        return dataclasses.replace(base, **changes) if changes else base

    def may_enable(self, key: str) -> bool:
        """Whether some rule turns `key` on (then its stage must exist even when the default is off)."""
        return any(rule.values.get(key) is True for rule in self.rules)

    def resolver(self, base: Policy) -> Callable[[str, str], Policy]:
        """`(server, tool) -> Policy`, memoised: a session sees few distinct tools (and the cache is
        bounded even against a backend that invents tool names)."""
        return functools.lru_cache(maxsize=4096)(functools.partial(self.resolve, base))
