"""Issue 23, Code Mode (items 18, 19, 20, 24, 31): hostile tool names, descriptions, parameter names and
session paths through a real `mcpsqueeze serve` and `install-commands`; the generated modules are imported
and every function called, by Python (standard library only) and Node 22."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from codemode_fuzz import (
    NASTY,
    PARAM_NAMES,
    TOOL_NAMES,
    Serve,
    hostile_tools,
    install,
    node22,
    run_node,
    run_python,
    start_serve,
)

from mcpsqueeze.codemode import Endpoint, render_code_client, write_code_client
from rawclient import ROOT

LANGS = {"python": ("hostile.py", run_python), "typescript": ("hostile.ts", run_node)}


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Serve]:
    tmp = tmp_path_factory.mktemp("hostile")
    serve = start_serve(tmp, hostile_tools(), "--socket", str(tmp / "run" / "s.sock"))
    yield serve
    serve.stop()


def _called(out: list[dict[str, object]]) -> dict[str, dict[str, object]]:
    """{tool name the backend saw: the arguments it got}, one entry per generated function."""
    echoes = [entry["echo"] for entry in out]
    assert all(isinstance(e, dict) for e in echoes)
    return {e["tool"]: e["arguments"] for e in echoes}  # type: ignore[index]


@pytest.mark.parametrize("lang", LANGS)
def test_23_18_a_nul_byte_or_any_control_character_in_a_description_leaves_the_module_importable(
    hostile: Serve, tmp_path: Path, lang: str
) -> None:
    done = install(hostile, lang, tmp_path)
    assert done.returncode == 0, done.stderr
    name, run = LANGS[lang]
    assert "\x00" not in (tmp_path / name).read_text(encoding="utf-8")
    out = run(tmp_path, "hostile")
    called = _called(out)
    assert sorted(called) == sorted(TOOL_NAMES)  # every tool is one function, and each calls its own tool
    for arguments in called.values():
        assert sorted(arguments) == sorted(PARAM_NAMES)  # type: ignore[arg-type]
        assert len(set(arguments.values())) == len(PARAM_NAMES)  # type: ignore[attr-defined]
    if lang == "python":  # the docstring reads back as the description, control characters and all
        docs = {entry["function"]: entry["doc"] for entry in out}
        assert f"tool 'plain': {NASTY}" in str(docs["plain"])


@pytest.mark.parametrize("lang", LANGS)
def test_23_19_a_parameter_named___proto___reaches_the_tool_from_typescript_as_from_python(
    hostile: Serve, tmp_path: Path, lang: str
) -> None:
    assert install(hostile, lang, tmp_path).returncode == 0
    name, run = LANGS[lang]
    for arguments in _called(run(tmp_path, "hostile")).values():
        assert isinstance(arguments, dict)
        for member in ("__proto__", "constructor", "toString", "hasOwnProperty", "valueOf"):
            assert str(arguments[member]).startswith("v:"), (member, arguments)
    text = (tmp_path / name).read_text(encoding="utf-8")
    if lang == "typescript":  # an own property, not the object literal's prototype slot
        assert '["__proto__"]: args.proto' in text and '  "__proto__":' not in text


def test_23_19_a_default_object_with_a___proto___key_keeps_it() -> None:
    tool = {
        "name": "t",
        "inputSchema": {"properties": {"o": {"type": "object", "default": {"__proto__": {"x": 1}}}}},
    }
    text = render_code_client("typescript", {"s": [tool]}, Endpoint("/s.sock"))["s.ts"]
    assert 'args.o ?? JSON.parse("{\\"__proto__\\": {\\"x\\": 1}}")' in text


def test_23_20_install_commands_against_a_down_backend_keeps_the_good_module_and_says_so(
    tmp_path: Path,
) -> None:
    serve = start_serve(tmp_path, hostile_tools(), "--socket", str(tmp_path / "run" / "s.sock"), down=True)
    try:
        for lang, (name, _) in LANGS.items():
            good = tmp_path / lang
            write_code_client(lang, good, {"hostile": hostile_tools()}, Endpoint(serve.address))  # type: ignore[arg-type]
            before = (good / name).read_text(encoding="utf-8")
            done = install(serve, lang, good)
            assert done.returncode == 3, done.stderr
            assert "hostile" in done.stderr and "down" in done.stderr and "kept" in done.stderr
            assert (good / name).read_text(encoding="utf-8") == before  # the good module, untouched
            fresh = tmp_path / f"{lang}-fresh"
            done = install(serve, lang, fresh)
            assert done.returncode == 3 and "hostile" in done.stderr
            assert not (fresh / name).exists()  # never an empty module for a server that is down
    finally:
        serve.stop()


PLACEHOLDERS = "__URL__/__TOKEN_FILE__/__SOCKET__"


def test_23_24_placeholder_names_in_the_written_paths_stay_those_paths() -> None:
    socket_path = f"/run/{PLACEHOLDERS}/s.sock"
    token_file = f'/t/{PLACEHOLDERS}/"quoted" \\ ${{x}} `t`/token'
    for lang, name in (("python", "squeeze_runtime.py"), ("typescript", "squeezeRuntime.ts")):
        unix = render_code_client(lang, {}, Endpoint(socket_path))[name]  # type: ignore[arg-type]
        tcp = render_code_client(lang, {}, Endpoint(url="http://127.0.0.1:9", token_file=token_file))[name]  # type: ignore[arg-type]
        assert json.dumps(socket_path) in unix and json.dumps(token_file) in tcp
        for text in (unix, tcp):
            assert text.count("__URL__") == text.count("__TOKEN_FILE__") == 1  # only inside the path


@pytest.fixture
def short_dir() -> Iterator[Path]:
    """A directory with a short path (a Unix socket path holds at most 107 bytes)."""
    path = Path(tempfile.mkdtemp(prefix="cm23-", dir="/tmp"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.mark.parametrize("lang", LANGS)
def test_23_24_a_session_whose_socket_or_token_path_names_a_placeholder_is_reached(
    short_dir: Path, lang: str
) -> None:
    tools = [{"name": "ping", "inputSchema": {"type": "object", "properties": {"x": {"type": "string"}}}}]
    hostile = short_dir / PLACEHOLDERS
    hostile.mkdir(mode=0o700, parents=True)
    unix = start_serve(short_dir / "u", tools, "--socket", str(hostile / "s.sock"))
    tcp = start_serve(
        short_dir / "t", tools, "--listen", "127.0.0.1:0", "--token-file", str(hostile / "token")
    )
    try:
        run = LANGS[lang][1]
        for serve in (unix, tcp):
            target = short_dir / f"{lang}-{'tcp' if serve is tcp else 'unix'}"
            done = install(serve, lang, target)
            assert done.returncode == 0, done.stderr
            assert _called(run(target, "hostile")) == {"ping": {"x": "v:x"}}  # no MCPSQUEEZE_* set
    finally:
        unix.stop()
        tcp.stop()


# -- item 31: which Node runs the TypeScript -------------------------------------------------------------


def _node_version(node: str) -> tuple[int, ...]:
    done = subprocess.run([node, "--version"], capture_output=True, text=True, timeout=30)
    return tuple(int(part) for part in done.stdout.strip().lstrip("v").split(".")[:2])


def test_23_31_the_docs_name_the_node_that_runs_the_typescript() -> None:
    for doc in (ROOT / "docs" / "bash.md", ROOT / "docs" / "code-mode.md"):
        text = doc.read_text(encoding="utf-8")
        assert "Node >= 20" not in text and "Node >= 22.6" in text, doc
    runtime = render_code_client("typescript", {}, Endpoint("/s.sock"))["squeezeRuntime.ts"]
    assert "Node >= 22.6" in runtime.split("\n\n", 1)[0]  # the generated file says so in its header


def test_23_31_install_commands_warns_when_the_node_on_path_cannot_run_the_typescript(
    hostile: Serve, tmp_path: Path
) -> None:
    old = shutil.which("node", path="/usr/local/bin:/usr/bin:/bin")
    if old is None or _node_version(old) >= (22, 6):
        pytest.skip("no Node older than 22.6 on this machine to warn about")
    refused = subprocess.run(
        [old, "--experimental-strip-types", "-e", "1"], capture_output=True, text=True, timeout=30
    )
    assert refused.returncode != 0  # what the docs used to promise
    for node_dir, warned in ((str(Path(old).parent), True), (str(Path(node22()).parent), False)):
        env = {**hostile.env, "PATH": f"{node_dir}:{os.path.dirname(sys.executable)}:/usr/bin:/bin"}
        done = subprocess.run(
            [sys.executable, "-m", "mcpsqueeze.cli", "install-commands", "--lang", "typescript", str(tmp_path)],
            capture_output=True, text=True, env=env, timeout=60,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        assert ("Node >= 22.6" in done.stderr) is warned, done.stderr


def test_23_18_lone_surrogates_nan_defaults_and_odd_enums_still_give_modules_that_load(
    tmp_path: Path,
) -> None:
    """What no JSON parser of a real session lets through, given to the generator directly."""
    nasty = {
        "name": "s\ud800x",
        "description": "lone \ud800 high \udfff low \x00",
        "inputSchema": {
            "properties": {
                "p\udc00": {"type": "number", "default": float("nan"), "description": "\ud83d half"},
                "e": {"enum": [float("nan"), {"a": 1}, [1], "x\ud800"], "default": float("inf")},
            }
        },
    }
    for lang, name in (("python", "odd.py"), ("typescript", "odd.ts")):
        write_code_client(lang, tmp_path / lang, {"odd": [nasty]}, Endpoint("/s.sock"))  # type: ignore[arg-type]
        assert "\x00" not in (tmp_path / lang / name).read_text(encoding="utf-8")
    loaded = subprocess.run(
        [sys.executable, "-I", "-S", "-c", "import sys; sys.path.insert(0, sys.argv[1]); import odd; "
         "import inspect; print(inspect.signature(odd.s_x))", str(tmp_path / "python")],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert loaded.returncode == 0, loaded.stderr
    assert loaded.stdout.startswith("(p: 'float | None' = None")  # nan is left to the server
    (tmp_path / "typescript" / "load.ts").write_text(
        'import * as odd from "./odd.ts";\nconsole.log(typeof odd.sX);\n', encoding="utf-8"
    )
    ran = subprocess.run(
        [node22(), "--experimental-strip-types", "--no-warnings", "load.ts"],
        capture_output=True, text=True, cwd=tmp_path / "typescript", timeout=60,
    )  # fmt: skip
    assert (ran.returncode, ran.stdout) == (0, "function\n"), ran.stderr
