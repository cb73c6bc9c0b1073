"""The shim stays small: standard library only, nothing heavy imported on a tool call."""

from __future__ import annotations

import subprocess
import sys

HEAVY = (
    "mcp",
    "mcp_types",
    "pydantic",
    "anyio",
    "orjson",
    "click",
    "platformdirs",
    "just_bash",
    "http",
    "email",
)
# What the shim itself may add to what `import mcpsqueeze` already loads (all small stdlib modules).
ALLOWED = {
    "json",
    "socket",
    "selectors",
    "select",
    "errno",
    "re",
    "enum",
    "functools",
    "collections",
    "math",
    "array",
    # what those pull in themselves (tiny, mostly built-in)
    "operator",
    "sre",
    "sre_compile",
    "sre_parse",
    "sre_constants",
    "copyreg",
    "reprlib",
    "types",
    "itertools",
    "keyword",
    "heapq",
    "weakref",
    "weakrefset",
    "locale",
    "struct",
}


def modules_after(statement: str) -> set[str]:
    code = f"import sys; {statement}; print('\\n'.join(sorted(sys.modules)))"
    return set(
        subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True
        ).stdout.split()
    )


def test_importing_the_shim_pulls_in_no_heavy_or_third_party_module() -> None:
    loaded = modules_after("import mcpsqueeze.bash.shim")
    assert not {m for m in loaded for h in HEAVY if m == h or m.startswith(h + ".")}


def test_the_shim_adds_only_small_stdlib_modules_to_the_package_itself() -> None:
    added = modules_after("import mcpsqueeze.bash.shim") - modules_after("import mcpsqueeze")
    ours = {m for m in added if m.startswith("mcpsqueeze.")}
    assert {m.split(".")[0].lstrip("_") for m in added - ours} <= ALLOWED | {m.lstrip("_") for m in ALLOWED}
    assert not any(m.startswith("mcpsqueeze.recovery") for m in ours), "recovery loads only for `recover`"
