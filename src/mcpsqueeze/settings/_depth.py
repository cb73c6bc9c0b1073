"""How deeply a config file nests, found before parsing: `json` and `tomllib` recurse once per level and
end in RecursionError on a file thousands of levels deep. No real config nests past a few
levels, so past `MAX_CONFIG_DEPTH` the file is refused with that bound named."""

from __future__ import annotations

__all__ = ["MAX_CONFIG_DEPTH", "too_deep"]

MAX_CONFIG_DEPTH = 64  # servers -> name -> env -> ... is 4; inline tables and arrays rarely nest past 3


def too_deep(text: str, toml: bool, limit: int = MAX_CONFIG_DEPTH) -> bool:
    """Whether `[`/`{` nest deeper than `limit` outside strings (and, in TOML, comments).

    One pass, stopping at the first level past the bound; brackets in strings never count."""
    depth = 0
    i, end = 0, len(text)
    while i < end:
        char = text[i]
        if char in "[{":
            depth += 1
            if depth > limit:
                return True
        elif char in "]}":
            depth = max(0, depth - 1)
        elif char == '"' or (toml and char == "'"):
            i = _string_end(text, i, toml)
            continue
        elif toml and char == "#":
            newline = text.find("\n", i)
            i = end if newline < 0 else newline
            continue
        i += 1
    return False


def _string_end(text: str, start: int, toml: bool) -> int:
    """The index just past the string opening at `start` (its end of text when it never closes)."""
    quote = text[start]
    if toml and text.startswith(quote * 3, start):
        close = text.find(quote * 3, start + 3)
        while quote == '"' and close > 0 and _escaped(text, close):
            close = text.find(quote * 3, close + 1)
        return len(text) if close < 0 else close + 3
    i = start + 1
    while i < len(text):
        char = text[i]
        if char == "\\" and quote == '"':
            i += 2
            continue
        if char == quote or (toml and char == "\n"):
            return i + 1
        i += 1
    return len(text)


def _escaped(text: str, index: int) -> bool:
    backslashes = 0
    while index - backslashes - 1 >= 0 and text[index - backslashes - 1] == "\\":
        backslashes += 1
    return backslashes % 2 == 1
