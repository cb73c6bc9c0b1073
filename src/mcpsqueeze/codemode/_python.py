"""Generated Python: one module per server, one typed function per tool. Templates -> text, pure."""

from __future__ import annotations

import json
import math
from typing import Any

from ._fill import printable, runtime_text, sentence
from ._schema import MISSING, Param, Tool, py_type

__all__ = ["MARKER", "RESERVED", "RUNTIME_MODULE", "SUFFIX", "module", "runtime"]

MARKER = "# mcpsqueeze-code-mode v1"
RUNTIME_MODULE = "squeeze_runtime"
SUFFIX = "py"
RESERVED = {"squeeze_recover", "truncation_of", "invoke", "call_tool", "SERVER"}
_FROM_RUNTIME = (
    "SqueezeError",
    "SqueezeSessionError",
    "SqueezeToolError",
    "squeeze_recover",
    "truncation_of",
)


def runtime(values: dict[str, str | None]) -> str:
    """`squeeze_runtime.py`: the template `squeeze_runtime.py.tmpl` with the endpoint as Python literals."""
    literals = {key: "None" if value is None else _q(value) for key, value in values.items()}
    return runtime_text("squeeze_runtime.py.tmpl", MARKER, literals)


def _doc(text: str, indent: str) -> str:
    """A docstring literal holding `text` exactly (backslashes, triple quotes and control characters
    escaped: a NUL byte or a lone surrogate in one description must not make the module unloadable)."""
    body = printable(text.replace("\\", "\\\\").replace('"""', '\\"\\"\\"').strip())
    if body.endswith('"'):
        body += " "
    lines = [line.rstrip() for line in body.splitlines()]
    if len(lines) <= 1:
        return f'{indent}"""{body}"""'
    rest = [f"{indent}{line}" if line else "" for line in lines[1:]]
    return "\n".join([f'{indent}"""{lines[0]}', *rest, f'{indent}"""'])


def _literal(value: Any) -> str | None:
    """A Python literal for a JSON default, or None when the default is better left to the server."""
    if isinstance(value, str):
        return _q(value)
    if isinstance(value, float) and not math.isfinite(value):
        return None  # `nan` is no Python literal: the server applies its own default
    if value is None or isinstance(value, bool | int | float):
        return repr(value)
    return None


def _q(text: str) -> str:
    """A double-quoted Python string literal (JSON's escapes are all valid Python)."""
    return json.dumps(text)


def _signature(params: tuple[Param, ...]) -> list[str]:
    parts = []
    for p in params:
        kind = py_type(p.schema)
        if p.required:
            parts.append(f"{p.py}: {kind}")
            continue
        literal = _literal(p.default) if p.default is not MISSING else None
        if literal is None or literal == "None":
            optional = (
                kind if kind == "Any" or kind.endswith("| None") or kind == "None" else f"{kind} | None"
            )
            parts.append(f"{p.py}: {optional} = None")
        else:
            parts.append(f"{p.py}: {kind} = {literal}")
    return parts


def _docstring(tool: Tool) -> str:
    lines = [tool.description.strip() or f"Call the tool {tool.name!r}."]
    if tool.params:
        lines += ["", "Args:"]
        for p in tool.params:
            text = sentence(p.description) or "(no description)"
            if not p.required and p.default is not MISSING:
                text += f" Default: {_literal(p.default) or repr(p.default)}."
            lines.append(f"    {p.py}: {text}" + ("" if p.required else " Optional."))
    lines += [
        "",
        "Returns parsed JSON (or the text); truncation_of(value) when shrunk. Raises SqueezeToolError.",
    ]
    return _doc("\n".join(lines), "    ")


def _function(tool: Tool) -> str:
    items = [f"{_q(p.name)}: {p.py}" for p in tool.params]
    call = f"    return _invoke(SERVER, {_q(tool.name)}, {{{', '.join(items)}}})"
    if len(call) > 100:
        body = "".join(f"            {item},\n" for item in items)
        opening = f"    return _invoke(\n        SERVER,\n        {_q(tool.name)},\n"
        call = f"{opening}        {{\n{body}        }},\n    )"
    signature = _signature(tool.params)
    head = f"def {tool.py}({', '.join(signature)}) -> Any:"
    if len(head) > 100:
        head = f"def {tool.py}(\n" + "".join(f"    {part},\n" for part in signature) + ") -> Any:"
    return f"{head}\n{_docstring(tool)}\n{call}\n"


def module(server: str, tools: list[Tool]) -> str:
    exported = sorted({"SERVER", *_FROM_RUNTIME, *(t.py for t in tools)})
    functions = [_function(t) for t in tools]
    uses_literal = any("Literal[" in f.split('"""', 1)[0] for f in functions)
    header = _doc(
        f"Tools of the mcpsqueeze session's server {_q(server)}, as typed functions (Code Mode).\n\n"
        "Written by `mcpsqueeze install-commands --lang python`; regenerate rather than edit. Every call\n"
        "goes through the running `mcpsqueeze serve` session (see squeeze_runtime.py for where it is).",
        "",
    )
    lines = [
        MARKER,
        header,
        "",
        "from __future__ import annotations",
        "",
        "from typing import Any, Literal" if uses_literal else "from typing import Any",
        "",
        f"from {RUNTIME_MODULE} import (",
        *(f"    {name}," for name in _FROM_RUNTIME),
        ")",
        f"from {RUNTIME_MODULE} import invoke as _invoke",
        "",
        "__all__ = [",
        *(f"    {_q(name)}," for name in exported),
        "]",
        "",
        f"SERVER = {_q(server)}",
    ]
    return "\n".join(lines) + "\n\n\n" + "\n\n".join(functions)
