"""The shim stays small: standard library only, nothing heavy imported on a tool call."""

from __future__ import annotations

import subprocess
import sys

import pytest

from .canned_session import Session

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
# What the shim itself may add to what `import mcpsqueeze` already loads: the C halves of socket and
# json (the Python halves pull in re, enum and selectors: see SLOW below).
ALLOWED = {"socket", "json"}
# Never loaded on a call or for the listing (`mcpsq --help`): each costs milliseconds of a shell
# command that should take ~15 ms. Error paths (difflib), tool help (textwrap) and `recover` (json)
# may load theirs.
SLOW = ("json", "re", "socket", "selectors", "enum", "math", "array", "textwrap", "difflib", "contextlib")


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


def modules_after_running(env: dict[str, str], *argv: str) -> set[str]:
    """The modules loaded once the shim has run ``mcpsq ARGV...`` (and succeeded) in a fresh process."""
    code = (
        "import sys; from mcpsqueeze.bash.shim import main; code = main(sys.argv[1:]); "
        "print('MODULES', *sorted(sys.modules)); sys.exit(code)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, *argv], env=env, capture_output=True, text=True, timeout=30
    )
    assert done.returncode == 0, done.stderr
    return set(done.stdout.rpartition("MODULES ")[2].split())


@pytest.mark.parametrize(
    "argv",
    [
        ("demo", "echo", "--text", "hi"),
        (
            "demo",
            "kitchen-sink",
            "--page-id",
            "p",
            "--ratio",
            "0.5",
            "--tags",
            '["a"]',
            "--filter",
            '{"x": 1}',
        ),
        ("demo", "echo", "--text", "hi", "--raw"),
        ("--help",),
        ("demo", "--help"),
    ],
    ids=["small-call", "every-flag-kind", "raw", "listing", "server-help"],
)
def test_a_call_and_the_listing_load_none_of_the_slow_stdlib_modules(
    shim_env: dict[str, str], session: Session, argv: tuple[str, ...]
) -> None:
    loaded = modules_after_running(shim_env, *argv)
    assert "mcpsqueeze.bash._session_http" in loaded  # it did run
    assert not {m for m in loaded for s in SLOW if m == s or m.startswith(s + ".")}
