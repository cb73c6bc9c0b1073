"""Per-tool policies: which stages run, and with what budget, for one `server:tool`. Pure, no I/O.

A `Policy` is the fully resolved answer for one call. It starts from the session's settings (every
field of `Policy` has a `Settings` field of the same name) and is refined by the rules of a config
file, matched by glob on `server:tool` (a pattern without `:` matches the tool name on any server),
applied in file order so a later rule wins key by key. The pipeline resolves it once per call
(`Call.policy`); the stages only read it.

To add a per-tool knob: add a field to `Policy` (with its `Settings` twin) and one checker line in
`POLICY_KEYS`; the config loader, the `config` printout and the lookup pick it up from there.
"""

from __future__ import annotations

import dataclasses
import fnmatch
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

__all__ = [
    "DEFAULT_BUDGET",
    "DEFAULT_SHRINK_ABOVE",
    "MIN_BUDGET",
    "MIN_TRUNCATE_CHARS",
    "POLICY_KEYS",
    "Policy",
    "PolicyRule",
    "PolicySet",
    "pattern_matches",
]

DEFAULT_BUDGET = 20_000
DEFAULT_SHRINK_ABOVE = 6000  # results over this get a preview sized by value (docs/previews.md)
MIN_BUDGET = 1024
MIN_TRUNCATE_CHARS = 256  # the smallest block that still holds a useful preview next to its marker


@dataclass(frozen=True)
class Policy:
    """What the stages do for one call."""

    budget: int = DEFAULT_BUDGET
    shrink: bool = True
    dedup: bool = True
    truncate_chars: int | None = None  # a cap on each text block as well (None: the budget only)
    shrink_above: int | None = (
        DEFAULT_SHRINK_ABOVE  # results over this get a preview sized by value (None: the budget only)
    )
    toonify: bool = False  # show JSON results that are not shrunk as TOON
    query: str | None = None  # a JMESPath projection of JSON results, applied before shrinking
    drop_duplicate_structured: bool = False  # drop structuredContent equal to the text (hides outputSchema)

    @classmethod
    def from_settings(cls, settings: Any) -> Policy:
        """The session-wide policy: each field taken from the `Settings` field of the same name."""
        names = [f.name for f in dataclasses.fields(cls) if hasattr(settings, f.name)]
        return cls(**{name: getattr(settings, name) for name in names})


def _check_bool(value: Any) -> bool:
    if not isinstance(value, bool):
        raise ValueError("must be true or false")
    return value


def _check_budget(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError("must be a whole number of characters")
    if value < MIN_BUDGET:
        raise ValueError(f"must be at least {MIN_BUDGET} characters, got {value}")
    return value


def _check_truncate_chars(value: Any) -> int | None:
    if value is False:  # a rule can lift a per-block cap that the defaults set
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError("must be a whole number of characters, or false for no per-block cap")
    if value < MIN_TRUNCATE_CHARS:
        raise ValueError(f"must be at least {MIN_TRUNCATE_CHARS} characters, got {value}")
    return value


def _check_shrink_above(value: Any) -> int | None:
    if value is False:  # only results over the budget shrink, as before size by value
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError("must be a whole number of characters, or false for the budget only")
    return value


def _check_query(value: Any) -> str | None:
    from .._errors import UsageError
    from .._projection import compile_query

    if value is False:  # a rule can lift a projection that an earlier rule set
        return None
    if not isinstance(value, str):
        raise ValueError("must be a JMESPath expression such as issues[].{key: key}, or false for none")
    try:
        compile_query(value)
    except UsageError as exc:
        raise ValueError(str(exc)) from None
    return value


# key -> checker (returns the value to use, raises ValueError with a short reason). One line per knob.
POLICY_KEYS: dict[str, Callable[[Any], Any]] = {
    "budget": _check_budget,
    "shrink": _check_bool,
    "dedup": _check_bool,
    "truncate_chars": _check_truncate_chars,
    "shrink_above": _check_shrink_above,
    "toonify": _check_bool,
    "query": _check_query,
    "drop_duplicate_structured": _check_bool,
}


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
        """`(server, tool) -> Policy`, memoised: a session sees few distinct tools."""
        cache: dict[tuple[str, str], Policy] = {}

        def lookup(server: str, tool: str) -> Policy:
            key = (server, tool)
            found = cache.get(key)
            if found is None:
                if len(cache) >= 4096:  # bounded even against a backend that invents tool names
                    cache.clear()
                found = cache[key] = self.resolve(base, server, tool)
            return found

        return lookup
