"""Helpers of the Code Mode fuzz tests: hostile tools, a real `serve` (in this process), and drivers that
import the generated modules and call every function, in Python (in this process) and Node 22.

The drivers know nothing of how names are mapped: Python calls each function with every parameter its
signature has; TypeScript passes a Proxy that answers any `args.NAME` with "v:NAME". The hostile backend
echoes the arguments it received, so the tests see which wire names arrived.
"""

from __future__ import annotations

import inspect
import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memwrap import Completed, Serve, generated_modules, run_cli
from rawclient import require_node_paths

BACKEND = Path(__file__).parents[1] / "fixtures" / "hostile_backend.py"

# What a server may put into its tools/list: every line ending and control character a parser can trip
# on, quotes and comment ends of both languages, template syntax, names that are keywords, builtins or
# members every JavaScript object inherits, and names that collide once made identifiers.
NASTY = (
    "NUL \x00 CR \r VT \x0b FF \x0c ESC \x1b DEL \x7f NEL \x85 LS \u2028 PS \u2029 end; "
    '"""triple""" \'\'\'single\'\'\' */ /* <!-- --> </script> ${x} `tick` \\ \\n \\u0041 "'
)
PARAM_NAMES = [
    "__proto__", "constructor", "toString", "hasOwnProperty", "valueOf", "class", "from", "self",
    "args", "SERVER", "_invoke", "invoke", "full", "2x", "a b", "a\x00b", "é", "日本", "", "a-b", "a_b",
]  # fmt: skip
TOOL_NAMES = [
    "plain", "class", "2fa", "x.y", "__proto__", "constructor", "toString", "undefined", "NaN",
    "invoke", "SERVER", "squeeze_recover", "truncation_of", "SqueezeError", "a\x00b", "é", "a\u2028b",
    "a-b", "a_b", "",
]  # fmt: skip


def hostile_tools() -> list[dict[str, Any]]:
    """The listing the hostile backend serves: every tool takes every hostile parameter name."""
    properties = {
        name: {"type": "string", "description": f"param {NASTY}", "default": f"d{NASTY}"}
        for name in PARAM_NAMES
    }
    schema = {"type": "object", "properties": properties, "required": ["from"]}
    return [
        {"name": name, "description": f"tool {name!r}: {NASTY}", "inputSchema": schema} for name in TOOL_NAMES
    ]


@dataclass
class Session:
    served: Serve
    env: dict[str, str]  # MCPSQUEEZE_* pointing at this session
    address: str

    def stop(self) -> None:
        self.served.stop()


def plain_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith("MCPSQUEEZE_")}


def start_serve(tmp: Path, tools: list[dict[str, Any]], *where: str, down: bool = False) -> Session:
    """`mcpsqueeze serve -n hostile -- python hostile_backend.py TOOLS` listening `where`, in this process."""
    tmp.mkdir(parents=True, exist_ok=True)
    listing = tmp / "tools.json"
    listing.write_text(json.dumps(tools), encoding="utf-8")
    backend = [sys.executable, str(BACKEND), str(listing), *(["--down"] if down else [])]
    served = Serve(["--recovery-dir", str(tmp / "rec"), *where, "-n", "hostile", "--", *backend])
    if served.where.startswith("http://"):
        token_file = where[where.index("--token-file") + 1]
        env = {**plain_env(), "MCPSQUEEZE_URL": served.where, "MCPSQUEEZE_TOKEN_FILE": token_file}
    else:
        env = {**plain_env(), "MCPSQUEEZE_SOCKET": served.where}
    return Session(served, env, served.where)


def install(serve: Session, lang: str, directory: Path) -> Completed:
    return run_cli("install-commands", "--lang", lang, str(directory), env=serve.env)


TS_DRIVER = """
const module = await import("./" + process.argv[2] + ".ts");
const runtime = await import("./squeezeRuntime.ts");
const shared = new Set(Object.values(runtime));
const args = new Proxy({}, { get: (_, key) => (typeof key === "string" ? "v:" + key : undefined) });
const out = [];
for (const [name, fn] of Object.entries(module)) {
  if (typeof fn !== "function" || shared.has(fn)) continue;
  out.push({ function: name, echo: await fn(args) });
}
console.log(JSON.stringify(out));
"""


def run_python(directory: Path, module: str) -> list[dict[str, Any]]:
    """Import `module` from `directory` and call every tool function with every parameter its signature
    has (that the generated code needs only the standard library: tests/codemode/test_code_mode.py)."""
    out = []
    with generated_modules(directory) as load:
        loaded = load(module)
        for name in loaded.__all__:
            fn = getattr(loaded, name)
            if not inspect.isfunction(fn) or fn.__module__ != loaded.__name__:
                continue
            value = fn(**{p: "v:" + p for p in inspect.signature(fn).parameters})
            out.append({"function": name, "doc": fn.__doc__, "echo": json.loads(json.dumps(value))})
    return out


def node22() -> str:
    return require_node_paths("NODE22")["NODE22"]


def run_node(directory: Path, module: str) -> list[dict[str, Any]]:
    """The same through Node 22 (`--experimental-strip-types`): import the module, call every function."""
    (directory / "driver.ts").write_text(TS_DRIVER, encoding="utf-8")
    done = subprocess.run(
        [node22(), "--experimental-strip-types", "--no-warnings", "driver.ts", module],
        capture_output=True, text=True, env=plain_env(), cwd=directory, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    result: list[dict[str, Any]] = json.loads(done.stdout)
    return result
