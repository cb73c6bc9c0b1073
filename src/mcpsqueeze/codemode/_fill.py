"""What may go into generated source: templates filled in one pass, and text made safe for comments.

Tool descriptions, parameter names and session paths come from servers and users; none of them may end a
docstring or comment early, carry a byte a parser refuses (NUL), a lone surrogate (not UTF-8, so the file
cannot be written), or a line break the target language sees where Python's `splitlines` does not. Pure.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from importlib import resources

__all__ = ["fill", "printable", "runtime_text", "sentence"]

_PLACEHOLDER = re.compile(r"__([A-Z][A-Z_]*[A-Z])__")

# Kept as they are: tab and newline. Escaped: every other C0/C1 control, DEL, the Unicode line and
# paragraph separators (line ends for JavaScript and for `str.splitlines`), and lone surrogates.
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff]")


def fill(template: str, values: Mapping[str, str]) -> str:
    """`template` with each `__NAME__` placeholder replaced by `values[NAME]`, in one pass.

    A value is never scanned again, so a socket path that contains `__URL__` stays that path. Every
    placeholder of the template must be given, and every value used (a template change cannot slip by).
    """
    found = {match.group(1) for match in _PLACEHOLDER.finditer(template)}
    if found != set(values):
        raise ValueError(f"template placeholders {sorted(found)} do not match {sorted(values)}")
    return _PLACEHOLDER.sub(lambda match: values[match.group(1)], template)


def runtime_text(template: str, marker: str, values: Mapping[str, str]) -> str:
    """A runtime file: its marker line, then the template shipped beside this module, filled."""
    text = resources.files(__package__).joinpath(template).read_text(encoding="utf-8")
    return f"{marker}\n{fill(text, values)}"


def printable(text: str) -> str:
    """`text` with what no comment or docstring may hold written as `\\xNN` / `\\uNNNN` escapes.

    For Python docstrings, whose backslashes the caller has already doubled, these are real escapes
    (the docstring reads back as the original text); in a JavaScript comment they are shown as written.
    """

    def escape(match: re.Match[str]) -> str:
        code = ord(match.group())
        return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"

    return _UNSAFE.sub(escape, text)


def sentence(text: str) -> str:
    """One line, ending with a full stop (descriptions are often bare titles such as "Limit")."""
    line = " ".join(text.split())
    return line if not line or line[-1] in ".!?:" else line + "."
