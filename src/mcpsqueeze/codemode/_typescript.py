"""Generated TypeScript: one module per server, one typed async function per tool. Templates -> text, pure."""

from __future__ import annotations

import json

from ._fill import printable, runtime_text, sentence
from ._schema import MISSING, Tool, ts_type

__all__ = ["MARKER", "RESERVED", "RUNTIME_MODULE", "SUFFIX", "module", "runtime"]

MARKER = "// mcpsqueeze-code-mode v1"
RUNTIME_MODULE = "squeezeRuntime"
SUFFIX = "ts"
RESERVED = {"squeeze_recover", "squeezeRecover", "truncationOf", "squeezedOf", "invoke", "callTool", "SERVER"}


def runtime(values: dict[str, str | None]) -> str:
    """`squeezeRuntime.ts`: the template `squeezeRuntime.ts.tmpl` with the endpoint as JSON literals.

    It runs on Node >= 22.6 with `--experimental-strip-types` (no flag from 22.18 and 23.6), or after
    `tsc`: the template uses no enums, namespaces or parameter properties."""
    return runtime_text("squeezeRuntime.ts.tmpl", MARKER, {key: json.dumps(v) for key, v in values.items()})


def _comment(text: str, indent: str = "") -> list[str]:
    """A JSDoc block holding `text` (a `*/` inside cannot end it early; control characters, line
    separators and lone surrogates are shown as escapes)."""
    lines = [line.rstrip() for line in printable(text.replace("*/", "*\\/").strip()).splitlines()]
    if len(lines) == 1 and len(indent) + len(lines[0]) < 100:
        return [f"{indent}/** {lines[0]} */"]
    return [f"{indent}/**", *(f"{indent} * {line}".rstrip() for line in lines), f"{indent} */"]


def _js_value(value: object) -> str:
    """A JavaScript expression for a JSON default (JSON.parse when a literal would drop a `__proto__` key)."""
    text = json.dumps(value)
    return f"JSON.parse({json.dumps(text)})" if '"__proto__"' in text else text


def _function(tool: Tool) -> list[str]:
    out: list[str] = []
    args_type = f"{tool.ts[0].upper()}{tool.ts[1:]}Args"
    if tool.params:
        out.append(f"export interface {args_type} {{")
        for p in tool.params:
            doc = sentence(p.description)
            if not p.required and p.default is not MISSING:
                doc = f"{doc} Default: {json.dumps(p.default)}.".strip()
            if doc:
                out += _comment(doc, "  ")
            out.append(f"  {p.ts}{'' if p.required else '?'}: {ts_type(p.schema)};")
        out += ["}", ""]
    description = tool.description.strip() or f"Call the tool {json.dumps(tool.name)}."
    out += _comment(
        f"{description}\n\n"
        "@returns the parsed JSON result (or its text); `truncationOf(value)` is its truncation record\n"
        "when it was shrunk (recover the original with `squeezeRecover`).\n"
        "@throws SqueezeToolError when the tool reports an error."
    )
    if tool.params:
        optional = all(not p.required for p in tool.params)
        signature = f"args: {args_type}" + (" = {}" if optional else "")
        sent = []
        for p in tool.params:
            value = f"args.{p.ts}"
            if not p.required and p.default is not MISSING:
                value += f" ?? {_js_value(p.default)}"
            # `"__proto__": v` in an object literal sets the prototype; a computed key is an own property
            key = json.dumps(p.name)
            sent.append(f"{f'[{key}]' if p.name == '__proto__' else key}: {value}")
        payload = "{ " + ", ".join(sent) + " }"
        if len(payload) > 60:
            payload = "{\n" + "".join(f"    {item},\n" for item in sent) + "  }"
    else:
        signature, payload = "", "{}"
    out += [
        f"export async function {tool.ts}({signature}): Promise<unknown> {{",
        f"  return invoke(SERVER, {json.dumps(tool.name)}, {payload});",
        "}",
    ]
    return out


def module(server: str, tools: list[Tool]) -> str:
    lines = [
        MARKER,
        f"// Tools of the mcpsqueeze session's server {json.dumps(server)}, as typed functions (Code Mode).",
        "// Written by `mcpsqueeze install-commands --lang typescript`; regenerate rather than edit.",
        "// Every call goes through the running `mcpsqueeze serve` session (see squeezeRuntime.ts).",
        "",
        f'import {{ invoke }} from "./{RUNTIME_MODULE}.ts";',
        "export {",
        "  SqueezeError,",
        "  SqueezeSessionError,",
        "  SqueezeToolError,",
        "  squeezeRecover,",
        "  squeeze_recover,",
        "  squeezedOf,",
        "  truncationOf,",
        f'}} from "./{RUNTIME_MODULE}.ts";',
        "",
        f"export const SERVER = {json.dumps(server)};",
    ]
    for tool in tools:
        lines += ["", *_function(tool)]
    return "\n".join(lines) + "\n"
