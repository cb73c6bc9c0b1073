"""Tool and flag names as a shell user types them: kebab-case, with a way back to the original.

Pure and stdlib-only (it runs in the shim on every command). ``searchIssues``, ``search_issues``
and ``Search Issues`` all become ``search-issues``. When two originals map to the same kebab name,
the choice is deterministic: an original already spelled that way wins, otherwise the first in
code-point order; the others get ``-2``, ``-3``... in that same order. Originals can always be
typed verbatim as well.
"""

from __future__ import annotations

import re

__all__ = ["NameMap", "kebab"]

_LOWER_UPPER = re.compile(r"([a-z0-9])([A-Z])")
_ACRONYM_WORD = re.compile(r"([A-Z]+)([A-Z][a-z])")
_SEPARATORS = re.compile(r"[^A-Za-z0-9]+")


def kebab(name: str) -> str:
    """``searchIssues``/``search_issues``/``HTTPRequest`` -> ``search-issues``/``http-request``.

    A name with no letters or digits at all is returned unchanged (there is nothing to convert).
    """
    words = _ACRONYM_WORD.sub(r"\1-\2", _LOWER_UPPER.sub(r"\1-\2", name))
    converted = _SEPARATORS.sub("-", words).strip("-").lower()
    return converted or name


class NameMap:
    """Kebab-case command names for a set of originals, and the way back."""

    __slots__ = ("_by_command", "_by_original")

    def __init__(self, originals: list[str] | tuple[str, ...]) -> None:
        groups: dict[str, list[str]] = {}
        for original in sorted(set(originals)):
            groups.setdefault(kebab(original), []).append(original)
        by_command: dict[str, str] = {}
        taken: set[str] = set()
        for base in sorted(groups):
            members = groups[base]
            members.sort(key=lambda o: (o != base, o))
            suffix = 1
            for original in members:
                command = base
                while command in taken:
                    suffix += 1
                    command = f"{base}-{suffix}"
                taken.add(command)
                by_command[command] = original
        self._by_command = by_command
        self._by_original = {original: command for command, original in by_command.items()}

    def command(self, original: str) -> str:
        """The command name of an original (KeyError when it is not one of ours)."""
        return self._by_original[original]

    def original(self, typed: str) -> str | None:
        """The original a typed name stands for: a command name, or an original spelled verbatim."""
        found = self._by_command.get(typed)
        if found is not None:
            return found
        if typed in self._by_original:
            return typed
        return None

    def commands(self) -> list[str]:
        """Every command name, sorted by the kebab name they were made from."""
        return list(self._by_command)

    def items(self) -> list[tuple[str, str]]:
        """``(command, original)`` pairs."""
        return list(self._by_command.items())
