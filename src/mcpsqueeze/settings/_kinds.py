"""The kinds of value a knob takes: each parses a flag's or variable's text, checks a config file's or the
library's value, and prints it back, so a bound is checked in one place for every door. Every number is
finite (nan and inf are refused everywhere) and within its kind's bound. Errors are `ValueError` with a
short reason; the door adds where the value came from.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .._errors import UsageError

__all__ = [
    "Boolean",
    "Choice",
    "Duration",
    "Globs",
    "Headers",
    "Kind",
    "PathValue",
    "Seconds",
    "Size",
    "Text",
    "Whole",
]

MAX_TIMEOUT = 7 * 86400.0  # a backend request abandoned after a week at the latest; None: never
MAX_DURATION = 3650 * 86400.0  # ten years; longer is 'off' (keep forever), not a number to compute with
_OFF_WORDS = ("off", "false", "none", "never")
_TRUE = ("1", "true", "yes", "on")
_FALSE = ("0", "false", "no", "off", "")


class Kind:
    """How one knob's value is read and shown. Subclasses override `check` (and `parse` for text)."""

    metavar = "VALUE"
    off: bool = False  # whether the knob has an "off" value (None)
    many: bool = False  # a flag given once per value (its variable: one value a line)

    def parse(self, text: str) -> Any:
        """A flag's or environment variable's text."""
        return self.check(text)

    def check(self, value: Any) -> Any:
        """A config file's or the Python API's value; raises ValueError saying what is wanted."""
        raise NotImplementedError

    def show(self, value: Any) -> str:
        """The value as `mcpsqueeze config` prints it (and as a flag would take it)."""
        if value is None:
            return "none"
        if isinstance(value, bool):
            return "true" if value else "false"
        return str(value)


@dataclass(frozen=True)
class Whole(Kind):
    """A whole number in [minimum, maximum]; with `off`, also false/'off' (None, the knob's "no limit")."""

    minimum: int = 1
    maximum: int | None = None
    unit: str = ""  # "characters": in messages
    off: bool = False
    off_means: str = "off"  # what false means, in messages
    none_text: str = "off"  # how `mcpsqueeze config` prints off

    @property
    def metavar(self) -> str:  # type: ignore[override]
        return "N|off" if self.off else "N"

    def _what(self) -> str:
        what = f"a whole number of {self.unit}" if self.unit else "a whole number"
        return what + (f", or false for {self.off_means}" if self.off else "")

    def show(self, value: Any) -> str:
        return self.none_text if value is None else str(value)

    def _unit(self) -> str:
        return f" {self.unit}" if self.unit else ""

    def parse(self, text: str) -> int | None:
        cleaned = text.strip().lower()
        if self.off and cleaned in _OFF_WORDS:
            return None
        if not re.fullmatch(r"[+-]?[0-9]{1,18}", cleaned):
            raise ValueError(f"must be {self._what()}, got {text!r}")
        return self.check(int(cleaned))

    def check(self, value: Any) -> int | None:
        if self.off and (value is None or value is False):
            return None
        if isinstance(value, bool) or not isinstance(value, int):
            raise ValueError(f"must be {self._what()}")
        if value < self.minimum:
            raise ValueError(f"must be at least {self.minimum}{self._unit()}, got {value}")
        if self.maximum is not None and value > self.maximum:
            raise ValueError(f"must be at most {self.maximum}{self._unit()}, got {value}")
        return value


def _finite(value: float, what: str) -> float:
    if math.isnan(value) or math.isinf(value):
        raise ValueError(f"must be a finite number ({what}), got {value!r}")
    return value


@dataclass(frozen=True)
class Seconds(Kind):
    """A positive, finite number of seconds up to `maximum` (a timeout)."""

    maximum: float = MAX_TIMEOUT
    metavar = "SECONDS"

    def parse(self, text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise ValueError(f"must be a number of seconds, got {text!r}") from None
        return self.check(value)

    def check(self, value: Any) -> float:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ValueError("must be a positive number of seconds")
        seconds = _finite(float(value), "seconds")
        if seconds <= 0:
            raise ValueError(f"must be a positive number of seconds, got {value!r}")
        if seconds > self.maximum:
            raise ValueError(f"must be at most {self.maximum:.0f} seconds, got {value!r}")
        return seconds

    def show(self, value: Any) -> str:
        return "none" if value is None else format_duration(value)


@dataclass(frozen=True)
class Duration(Kind):
    """A lifetime: "30s", "90m", "24h", "7d", "1h30m" or seconds; with `off`, 'off'/'never' keep forever.

    0 is refused as ambiguous ("off" to some, "at once" to others); at most `MAX_DURATION`."""

    off: bool = True
    metavar = "DURATION"

    def check(self, value: Any) -> float | None:
        from ..recovery import parse_duration

        if isinstance(value, str) and value.strip().lower() in ("off", "never"):
            if not self.off:
                raise ValueError("must be a positive duration such as 300s or 24h")
            return None
        if isinstance(value, int | float) and not isinstance(value, bool):
            seconds = _finite(float(value), "seconds")
        elif isinstance(value, str):
            try:
                seconds = parse_duration(value)
            except UsageError as exc:
                raise ValueError(str(exc)) from None
        else:
            raise ValueError("must be a duration such as 30s, 90m, 24h or 7d")
        if seconds == 0:
            hint = "write 'off' (or 'never') to keep forever, or" if self.off else "write"
            raise ValueError(f"{value!r} is ambiguous; {hint} a lifetime such as 30s, 24h or 7d")
        if seconds < 0:
            raise ValueError(f"must be a positive duration, got {value!r}")
        if seconds > MAX_DURATION:
            longer = "; write 'off' to keep forever" if self.off else ""
            raise ValueError(f"must be at most 3650d (ten years){longer}, got {value!r}")
        return seconds

    def show(self, value: Any) -> str:
        return "off" if value is None or value == math.inf else format_duration(value)


@dataclass(frozen=True)
class Size(Kind):
    """A number of bytes: 1048576, "32M", "1G", "1GiB", "1GB" (at least `minimum`, at most `maximum`)."""

    minimum: int = 1
    maximum: int = 1 << 50  # a pebibyte: past any machine's memory, below float rounding
    metavar = "SIZE"

    def check(self, value: Any) -> int:
        from ..recovery import parse_size

        if isinstance(value, float) and not isinstance(value, bool):
            _finite(value, "bytes")
        if isinstance(value, bool) or not isinstance(value, int | str):
            raise ValueError("must be a size such as 32M or 1G")
        if isinstance(value, str):
            try:
                value = parse_size(value)
            except UsageError as exc:
                raise ValueError(str(exc)) from None
        if value < self.minimum:
            raise ValueError(f"must be at least {self.minimum} bytes, got {value}")
        if value > self.maximum:
            raise ValueError(f"must be at most {self.maximum} bytes, got {value}")
        return int(value)


@dataclass(frozen=True)
class Boolean(Kind):
    """true or false (a variable also takes 1/0, yes/no, on/off)."""

    metavar = "BOOL"

    def parse(self, text: str) -> bool:
        cleaned = text.strip().lower()
        if cleaned in _TRUE:
            return True
        if cleaned in _FALSE:
            return False
        raise ValueError(f"must be true or false, got {text!r}")

    def check(self, value: Any) -> bool:
        if not isinstance(value, bool):
            raise ValueError("must be true or false")
        return value


@dataclass(frozen=True)
class Choice(Kind):
    """One of a few words."""

    choices: tuple[str, ...] = ()
    folded: bool = False  # case-insensitive (the log level)

    @property
    def metavar(self) -> str:  # type: ignore[override]
        return "[" + "|".join(self.choices) + "]"

    def check(self, value: Any) -> str:
        word = value.lower() if self.folded and isinstance(value, str) else value
        if word not in self.choices:
            quoted = ", ".join(f'"{c}"' for c in self.choices)
            raise ValueError(f"must be one of {quoted}, got {value!r}")
        return str(word)


@dataclass(frozen=True)
class PathValue(Kind):
    """A file or directory path (`~` expanded)."""

    metavar = "PATH"

    def check(self, value: Any) -> Path:
        if isinstance(value, Path):
            return value.expanduser()
        if not isinstance(value, str) or not value or "\0" in value:
            raise ValueError("must be a path string")
        return Path(value).expanduser()


@dataclass(frozen=True)
class Text(Kind):
    """A string, matching `pattern` whole when given (else "must be <wanted>"), and checked by `valid` (which
    raises ValueError with the reason) when given."""

    pattern: str = ""
    metavar: str = "TEXT"
    off: bool = False
    wanted: str = "a string"  # what is wanted, in messages
    valid: Callable[[str], None] | None = None

    def check(self, value: Any) -> str | None:
        if self.off and value is False:
            return None
        if not isinstance(value, str) or (self.pattern and not re.fullmatch(self.pattern, value)):
            raise ValueError(f"must be {self.wanted}")
        if self.valid is not None:
            self.valid(value)
        return value


@dataclass(frozen=True)
class Globs(Kind):
    """Glob patterns (tool, or server:tool): "a,b*" on a flag, a list (or that string) elsewhere."""

    metavar = "GLOB,..."

    def check(self, value: Any) -> tuple[str, ...]:
        if isinstance(value, str):
            value = value.split(",")
        if not isinstance(value, list | tuple) or not all(isinstance(v, str) for v in value):
            raise ValueError(
                "must be comma-separated globs such as 'search_*,github:get_*', or a list of them"
            )
        return tuple(v.strip() for v in value if v.strip())

    def show(self, value: Any) -> str:
        return ",".join(value) if value else "none"


@dataclass(frozen=True)
class Headers(Kind):
    """HTTP headers for a URL backend: `KEY=VALUE` once per header on a flag (one a line in the
    variable), a table elsewhere."""

    metavar = "KEY=VALUE"
    many = True

    def parse(self, text: str) -> str:
        key, sep, _ = text.partition("=")
        if not sep or not key.strip():
            raise ValueError(f"{text!r} is not KEY=VALUE")
        return text

    def check(self, value: Any) -> dict[str, str]:
        if isinstance(value, list | tuple):
            value = {k.strip(): v for k, _, v in (self.parse(item).partition("=") for item in value)}
        if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
            raise ValueError("must be a table of header names and string values")
        return {str(k): v for k, v in value.items()}

    def show(self, value: Any) -> str:
        return ", ".join(f"{k}=..." for k in value) if value else "none"


def format_duration(seconds: float) -> str:
    """Finite seconds as `mcpsqueeze config` prints them: 300s, 604800s, 1.5s; never 8.64e+24s."""
    if seconds == int(seconds):
        return f"{int(seconds)}s"
    return f"{seconds:.3f}".rstrip("0").rstrip(".") + "s"
