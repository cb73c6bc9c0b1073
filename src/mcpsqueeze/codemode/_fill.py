"""What may go into generated source: placeholders filled in one pass, and text made safe for comments (no
early end of a docstring or comment, no NUL, no lone surrogate, no line break the target language sees).
Pure.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from importlib import resources

__all__ = ["printable", "runtime_text", "sentence"]

_PLACEHOLDER = re.compile(r"__([A-Z][A-Z_]*[A-Z])__")

# Kept as they are: tab and newline. Escaped: every other C0/C1 control, DEL, the Unicode line and
# paragraph separators (line ends for JavaScript and for `str.splitlines`), and lone surrogates.
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff]")


def runtime_text(template: str, marker: str, values: Mapping[str, str]) -> str:
    """A runtime file: its marker line, then the template shipped beside this module with each `__NAME__`
    replaced by `values[NAME]`, in one pass (a value is never scanned again)."""
    text = resources.files(__package__).joinpath(template).read_text(encoding="utf-8")
    return f"{marker}\n" + _PLACEHOLDER.sub(lambda match: values[match.group(1)], text)


def printable(text: str) -> str:
    """`text` with what no comment or docstring may hold as `\\xNN` / `\\uNNNN` escapes (real escapes in a
    Python docstring, whose backslashes the caller doubled; shown as written in a JavaScript comment)."""

    def escape(match: re.Match[str]) -> str:
        code = ord(match.group())
        return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"

    return _UNSAFE.sub(escape, text)


def sentence(text: str) -> str:
    """One line, ending with a full stop (descriptions are often bare titles such as "Limit")."""
    line = " ".join(text.split())
    return line if not line or line[-1] in ".!?:" else line + "."
