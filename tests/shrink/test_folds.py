"""Folds an agent can afford to open: no fold of structured lines stands for more than
``FOLD_LINES`` lines, test files show their test names, Markdown keeps the first sentence under each
heading, and lock files show every package as one ``name version`` marker."""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from outlines import folds, rebuild

from mcpsqueeze._lines import split_lines
from mcpsqueeze._voice import McpVoice
from mcpsqueeze.shrink import RecoveryHint, landmarks, shrink_texts
from mcpsqueeze.shrink._plans import FOLD_LINES

FIXTURES = Path(__file__).parent / "fixtures"
BUDGET, ABOVE = 20000, 6000  # the defaults of wrap and serve
HINT = RecoveryHint("a" * 32, "/tmp/recovery/mcpsqueeze-" + "a" * 32 + ".json", McpVoice())
_JS_TEST = re.compile(r"^\s*(?:describe|it|test)(?:\.\w+)*\s*\(")


def _preview(text: str, budget: int = BUDGET, above: int | None = ABOVE) -> str:
    shrunk = shrink_texts([text], budget, HINT, above=above)
    assert shrunk is not None
    (preview,) = shrunk.texts
    assert len(preview) <= budget
    assert rebuild(preview, text) == text
    return preview


def _depth(line: str) -> int | None:
    body = line.lstrip(" \t")
    if not body.strip():
        return None
    lead = line[: len(line) - len(body)]
    return len(lead) + 3 * lead.count("\t")


def _structured(lines: list[str]) -> bool:
    """Some line of ``lines`` has the next non-blank line indented under it."""
    previous: int | None = None
    for line in lines:
        d = _depth(line)
        if d is None:
            continue
        if previous is not None and d > previous:
            return True
        previous = d
    return False


def assert_affordable_folds(preview: str, text: str) -> None:
    """Every marker names lines that exist, and none over ``FOLD_LINES`` folds structured lines."""
    lines = split_lines(text)
    for first, last, _words in folds(preview):
        assert 1 <= first <= last <= len(lines), (first, last, len(lines))
        if last - first + 1 > FOLD_LINES:
            assert not _structured(lines[first - 1 : last]), (first, last)


# -- test names ----------------------------------------------------------------------------------------


def test_a_typescript_test_file_shows_every_describe_and_it_line() -> None:
    text = (FIXTURES / "store.test.ts").read_text(encoding="utf-8")
    names = [line.rstrip("\n") for line in split_lines(text) if _JS_TEST.match(line)]
    assert len(split_lines(text)) > 1300 and len(names) >= 100
    preview = _preview(text)
    shown = set(preview.split("\n"))
    assert [n for n in names if n not in shown] == []
    assert set(names) <= set(landmarks(text))  # test names are landmarks of the test file
    assert_affordable_folds(preview, text)
    assert max(last - first + 1 for first, last, _ in folds(preview)) <= FOLD_LINES


def _python_tests(count: int) -> str:
    out = ['"""Tests."""\n', "\n", "import pytest\n", "\n", "from app import parse\n", "\n"]
    for k in range(count):
        if k % 10 == 0:
            out += [f"class TestGroup{k}:\n", '    """A group."""\n', "\n"]
        out += [
            '    @pytest.mark.parametrize("n", [1, 2])\n',
            f"    def test_parse_case_{k}(self, n: int) -> None:\n",
        ]
        out += ["        with pytest.raises(ValueError):\n", "            parse(None)\n"]
        out += [f"        value = parse('{k}' * {j})\n        assert value == {j}\n" for j in range(6)]
        out.append("\n")
    return "".join(out)


def _go_tests(count: int) -> str:
    out = ["package store\n", "\n", 'import "testing"\n', "\n"]
    for k in range(count):
        out += [f"func TestStore{k}(t *testing.T) {{\n", "\ts := New()\n"]
        out += [
            f'\tif got := s.Get("k{j}"); got != {j} {{\n\t\tt.Fatalf("got %d", got)\n\t}}\n' for j in range(5)
        ]
        out += ["}\n", "\n"]
    return "".join(out)


def _rust_tests(count: int) -> str:
    out = ["use super::*;\n", "\n", "#[cfg(test)]\n", "mod tests {\n", "    use super::*;\n", "\n"]
    for k in range(count):
        out += ["    #[test]\n", f"    fn parses_case_{k}() {{\n", f"        let v = parse({k});\n"]
        out += [f"        assert_eq!(v.get({j}), Some(&{j}));\n" for j in range(6)]
        out += ["    }\n", "\n"]
    out.append("}\n")
    return "".join(out)


def test_python_go_and_rust_test_names_are_landmarks_and_shown() -> None:
    cases = [
        (_python_tests(120), re.compile(r"^\s*(?:def test_\w*|class Test\w*)")),
        (_go_tests(120), re.compile(r"^func Test\w*\(")),
        (_rust_tests(120), re.compile(r"^\s*fn \w+\(\) \{")),  # each one follows its #[test]
    ]
    for text, pattern in cases:
        names = [line.rstrip("\n") for line in split_lines(text) if pattern.match(line)]
        assert len(names) >= 120
        assert set(names) <= set(landmarks(text))
        shown = set(_preview(text).split("\n"))
        assert [n for n in names if n not in shown] == []


# -- bounded folds ------------------------------------------------------------------------------------


def _long_function(statements: int, seed: int) -> str:
    """A module whose one function has a body of ``statements`` blocks (if/for/with, nested)."""
    rng = random.Random(seed)
    out = ['"""A module with one long function."""\n', "\n", "import os\n", "\n", "\n"]
    out += ["def run(items: list[int]) -> int:\n", '    """Work through the items."""\n', "    total = 0\n"]
    for k in range(statements):
        head = rng.choice(["if total > {k}:", "for item in items[{k}:]:", "with open(os.devnull) as f{k}:"])
        out.append("    " + head.format(k=k) + "\n")
        for j in range(rng.randrange(2, 9)):
            if rng.random() < 0.2:
                out += [f"        if item == {j}:\n", f"            total += {j}\n"]
            else:
                out.append(f"        total += item * {j}\n")
    out.append("    return total\n")
    return "".join(out)


def test_a_long_function_body_shows_its_inner_blocks_and_no_fold_is_over_the_bound() -> None:
    text = _long_function(160, seed=3)
    assert len(split_lines(text)) > 5 * FOLD_LINES
    preview = _preview(text)
    assert_affordable_folds(preview, text)
    assert max(last - first + 1 for first, last, _ in folds(preview)) <= FOLD_LINES


def test_a_large_new_file_in_a_diff_shows_its_definitions() -> None:
    source = _long_function(60, seed=5).replace("def run(", "def walk(") + "".join(
        f"\n\ndef helper_{k}(x: int) -> int:\n"
        + "".join(f"    x += {j}\n" for j in range(12))
        + "    return x\n"
        for k in range(20)
    )
    body = ["+" + line for line in split_lines(source)]
    text = (
        "diff --git a/walk.py b/walk.py\nnew file mode 100644\nindex 0000000..1111111\n--- /dev/null\n"
        f"+++ b/walk.py\n@@ -0,0 +1,{len(body)} @@\n" + "".join(body)
    )
    preview = _preview(text)
    shown = set(preview.split("\n"))
    assert all(f"+def helper_{k}(x: int) -> int:" in shown for k in range(20))
    assert_affordable_folds(
        preview, "".join(line[1:] if line[:1] == "+" else line for line in split_lines(text))
    )


def test_flat_lines_may_stay_in_one_fold() -> None:
    """A long run without structure (a data table in code) is one fold: nothing inside says more."""
    rows = "".join(f"    ({k}, 'name-{k}', {k * 7 % 13}),\n" for k in range(900))
    text = (
        '"""Data."""\n\nimport os\nfrom typing import Any\n\n\ndef f(x):\n    if x:\n        raise ValueError(x)\n'
        f"    return x\n\n\ndef rows() -> list[Any]:\n    return [\n{rows}    ]\n"
    )
    preview = _preview(text)
    assert any(last - first + 1 > FOLD_LINES for first, last, _ in folds(preview))
    assert_affordable_folds(preview, text)


# -- Markdown -----------------------------------------------------------------------------------------


def test_markdown_keeps_the_first_sentence_under_each_heading() -> None:
    text = (FIXTURES / "README.md").read_text(encoding="utf-8")
    preview = _preview(text, 3000, above=None)
    shown = set(preview.split("\n"))
    lines = split_lines(text)
    checked = 0
    fence = False
    for i, line in enumerate(lines):
        if line.lstrip().startswith("```"):
            fence = not fence
        if fence or not re.match(r"^#{1,6} ", line):
            continue
        j = i + 1
        while j < len(lines) and not lines[j].strip():
            j += 1
        if j == len(lines) or lines[j].startswith(("#", "```", "- ", "* ", "|", ">")):
            continue
        while True:  # the paragraph's lines up to the one that ends its first sentence
            assert lines[j].rstrip("\n") in shown, (line, lines[j])
            checked += 1
            if re.search(r"[.!?][\"')\]*_`]*(?:\s|$)", lines[j]) or not lines[j + 1].strip():
                break
            j += 1
    assert checked >= 5


def _readme(sections: int) -> str:
    rng = random.Random(9)
    words = [
        "the",
        "proxy",
        "keeps",
        "every",
        "result",
        "whole",
        "until",
        "it",
        "is",
        "larger",
        "than",
        "the",
        "budget",
        "and",
        "then",
    ]
    out = ["# Project\n", "\n"]
    for k in range(sections):
        out += [f"## Section {k}\n", "\n"]
        for _ in range(3):
            sentence = (
                " ".join(rng.choice(words) for _ in range(rng.randrange(18, 40)))
                + " (see [the docs](docs/x.md))."
            )
            para = sentence + " " + " ".join(rng.choice(words) for _ in range(30)) + "."
            out += [para[i : i + 72].strip() + "\n" for i in range(0, len(para), 72)] + ["\n"]
    return "".join(out)


def test_a_readme_of_prose_sections_arrives_with_a_sentence_per_section() -> None:
    text = _readme(24)
    preview = _preview(text)
    for k in range(24):
        section = text.split(f"## Section {k}\n\n", 1)[1]
        first_line = section.split("\n", 1)[0]
        assert first_line in preview.split("\n")


# -- lock files ---------------------------------------------------------------------------------------

_PARTS = [
    "serde",
    "tokio",
    "clap",
    "regex",
    "rand",
    "log",
    "anyhow",
    "hyper",
    "http",
    "futures",
    "bytes",
    "mio",
    "syn",
    "quote",
    "proc",
    "libc",
]
_TAILS = [
    "core",
    "derive",
    "macros",
    "util",
    "sys",
    "impl",
    "types",
    "codec",
    "io",
    "rt",
    "json",
    "fmt",
    "shim",
]


def _names(count: int) -> list[tuple[str, str]]:
    rng = random.Random(count)
    names: dict[str, str] = {}
    while len(names) < count:
        name = (
            rng.choice(_PARTS)
            + "-"
            + rng.choice(_TAILS)
            + ("" if rng.random() < 0.5 else f"-{rng.randrange(99)}")
        )
        names[name] = f"{rng.randrange(4)}.{rng.randrange(30)}.{rng.randrange(20)}"
    return list(names.items())


def _hex(rng: random.Random, n: int) -> str:
    return "".join(rng.choice("0123456789abcdef") for _ in range(n))


def cargo_lock(count: int) -> str:
    rng = random.Random(1)
    out = ["# This file is automatically @generated by Cargo.\n# It is not intended for manual editing.\n"]
    out.append("version = 3\n")
    pkgs = _names(count)
    for name, version in pkgs:
        out.append(f'\n[[package]]\nname = "{name}"\nversion = "{version}"\n')
        out.append('source = "registry+https://github.com/rust-lang/crates.io-index"\n')
        out.append(f'checksum = "{_hex(rng, 64)}"\n')
        deps = rng.sample(pkgs, rng.randrange(0, 5))
        if deps:
            out.append("dependencies = [\n" + "".join(f' "{d}",\n' for d, _ in deps) + "]\n")
    return "".join(out)


def uv_lock(count: int) -> str:
    rng = random.Random(2)
    out = ['version = 1\nrequires-python = ">=3.11"\n']
    for name, version in _names(count):
        url = f"https://files.pythonhosted.org/packages/{_hex(rng, 2)}/{_hex(rng, 2)}/{name}-{version}"
        out.append(f'\n[[package]]\nname = "{name}"\nversion = "{version}"\n')
        out.append('source = { registry = "https://pypi.org/simple" }\n')
        out.append(f'sdist = {{ url = "{url}.tar.gz", hash = "sha256:{_hex(rng, 64)}", size = 1234 }}\n')
        out.append(
            f'wheels = [\n    {{ url = "{url}-py3-none-any.whl", hash = "sha256:{_hex(rng, 64)}" }},\n]\n'
        )
    return "".join(out)


def poetry_lock(count: int) -> str:
    rng = random.Random(3)
    out = ["# This file is automatically @generated by Poetry 1.8.3 and should not be changed by hand.\n"]
    for name, version in _names(count):
        out.append(f'\n[[package]]\nname = "{name}"\nversion = "{version}"\ndescription = "A package."\n')
        out.append('optional = false\npython-versions = ">=3.8"\nfiles = [\n')
        out.append(f'    {{file = "{name}-{version}.tar.gz", hash = "sha256:{_hex(rng, 64)}"}},\n]\n')
        out.append('\n[package.dependencies]\ntyping-extensions = ">=4"\n')
    out.append('\n[metadata]\nlock-version = "2.0"\npython-versions = "^3.11"\n')
    out.append(f'content-hash = "{_hex(rng, 64)}"\n')
    return "".join(out)


def yarn_lock(count: int) -> str:
    rng = random.Random(4)
    out = ["# THIS IS AN AUTOGENERATED FILE. DO NOT EDIT THIS FILE DIRECTLY.\n# yarn lockfile v1\n\n"]
    for name, version in _names(count):
        scoped = "@types/" + name if rng.random() < 0.3 else name
        out.append(f'\n"{scoped}@^{version}", "{scoped}@~{version}":\n  version "{version}"\n')
        out.append(
            f'  resolved "https://registry.yarnpkg.com/{scoped}/-/{name}-{version}.tgz#{_hex(rng, 40)}"\n'
        )
        out.append(f'  integrity sha512-{_hex(rng, 86)}==\n  dependencies:\n    left-pad "^1.0.0"\n')
    return "".join(out)


def yarn_berry_lock(count: int) -> str:
    rng = random.Random(8)
    out = ['# This file is generated by running "yarn install" inside your project.\n']
    out.append(
        "# Manual changes might be lost - proceed with caution!\n\n__metadata:\n  version: 6\n  cacheKey: 8\n"
    )
    for name, version in _names(count):
        out.append(
            f'\n"{name}@npm:^{version}":\n  version: {version}\n  resolution: "{name}@npm:{version}"\n'
        )
        out.append(f"  checksum: {_hex(rng, 128)}\n  languageName: node\n  linkType: hard\n")
    return "".join(out)


def pnpm_lock(count: int) -> str:
    rng = random.Random(5)
    pkgs = _names(count)
    out = ["lockfileVersion: '9.0'\n\nsettings:\n  autoInstallPeers: true\n\nimporters:\n\n  .:\n"]
    out.append("    dependencies:\n")
    for name, version in pkgs[:5]:
        out.append(f"      {name}:\n        specifier: ^{version}\n        version: {version}\n")
    out.append("\npackages:\n")
    for name, version in pkgs:
        out.append(f"\n  {name}@{version}:\n    resolution: {{integrity: sha512-{_hex(rng, 86)}==}}\n")
        out.append("    engines: {node: '>=12'}\n")
    return "".join(out)


def package_lock(count: int) -> str:
    rng = random.Random(6)
    packages: dict[str, object] = {"": {"name": "app", "version": "1.0.0", "dependencies": {"a": "^1"}}}
    for name, version in _names(count):
        packages[f"node_modules/{name}"] = {
            "version": version,
            "resolved": f"https://registry.npmjs.org/{name}/-/{name}-{version}.tgz",
            "integrity": f"sha512-{_hex(rng, 86)}==",
            "dependencies": {"left-pad": "^1.0.0"},
        }
    document = {
        "name": "app",
        "version": "1.0.0",
        "lockfileVersion": 3,
        "requires": True,
        "packages": packages,
    }
    return json.dumps(document, indent=2) + "\n"


def go_sum(count: int) -> str:
    rng = random.Random(7)
    out = []
    for name, version in _names(count):
        path = f"github.com/{name.split('-')[0]}/{name}"
        out.append(f"{path} v{version} h1:{_hex(rng, 43)}=\n{path} v{version}/go.mod h1:{_hex(rng, 43)}=\n")
    return "".join(out)


LOCKS = {
    "Cargo.lock": cargo_lock,
    "uv.lock": uv_lock,
    "poetry.lock": poetry_lock,
    "yarn.lock": yarn_lock,
    "yarn.lock (berry)": yarn_berry_lock,
    "pnpm-lock.yaml": pnpm_lock,
    "package-lock.json": package_lock,
    "go.sum": go_sum,
}


def _package_markers(preview: str) -> set[str]:
    return {words for _first, _last, words in folds(preview)}


def test_every_package_of_a_320_package_lock_file_fits_as_one_name_version_marker() -> None:
    for name, make in LOCKS.items():
        count = 300 if name == "go.sum" else 320  # a go.sum marker names a module path: ~60 chars
        text = make(count)
        preview = _preview(text)
        markers = _package_markers(preview)
        missing = [
            f"{n} {v}"
            for n, v in _names(count)
            if not any(re.search(rf"(?:^|[/ ]){re.escape(n)} v?{re.escape(v)}$", m) for m in markers)
        ]
        assert missing == [], (name, len(missing), preview[:600])
        assert_affordable_folds(preview, text)


def test_a_cargo_lock_of_82_kb_shows_all_320_names_within_20000_chars() -> None:
    text = cargo_lock(320)
    assert len(text) > 70_000
    preview = _preview(text)
    shown = sum(f": {n} {v}]" in preview for n, v in _names(320))
    assert shown == 320


def test_a_lock_file_too_long_for_a_marker_per_package_groups_them_and_stays_exact() -> None:
    text = cargo_lock(3000)
    preview = _preview(text)
    words = [w for _, _, w in folds(preview)]
    assert any(re.fullmatch(r"\d+ packages, \S+ to \S+", w) for w in words)
    assert len(preview) <= BUDGET


def test_a_query_line_inside_a_lock_file_is_shown_in_its_package() -> None:
    text = cargo_lock(320)
    name, _version = _names(320)[200]
    shrunk = shrink_texts([text], BUDGET, HINT, [name], above=ABOVE)
    assert shrunk is not None
    assert f'name = "{name}"' in shrunk.texts[0].split("\n")
    assert rebuild(shrunk.texts[0], text) == text


# -- properties ---------------------------------------------------------------------------------------

_WORDS = ["alpha", "beta", "load", "parse", "x", "total", "item", "store"]


def nested_code(seed: int) -> str:
    """Python-like or brace code of nested blocks, long runs and some flat ones, from ``seed``."""
    rng = random.Random(seed)
    braces = rng.random() < 0.5
    if braces:
        out = ['import { a } from "b";\n', 'import { c } from "d";\n', "\n"]
        out += [f"export function helper{k}(x) {{\n  return x + {k};\n}}\n\n" for k in range(3)]
    else:
        out = ['"""Generated."""\n', "\n", "import os\n", "from typing import Any\n", "\n"]
        out += [
            f"def helper{k}(x: Any) -> Any:\n    if x:\n        raise ValueError(x)\n\n" for k in range(3)
        ]
    end = ";" if braces else ""

    def block(depth: int, size: int) -> None:
        pad = "    " * depth
        for _ in range(size):
            if len(out) > 3000:
                return
            kind = rng.choice(["stmt", "stmt", "stmt", "open", "blank", "flat"])
            if kind == "stmt":
                out.append(
                    f"{pad}{rng.choice(_WORDS)}{rng.randrange(999)} = {rng.choice(_WORDS)}({rng.randrange(99)}){end}\n"
                )
            elif kind == "blank":
                out.append("\n")
            elif kind == "flat":
                out.extend(f"{pad}{rng.choice(_WORDS)}_{k} = {k}{end}\n" for k in range(rng.randrange(1, 60)))
            elif depth < 5:
                out.append(
                    f"{pad}if {rng.choice(_WORDS)}:\n"
                    if not braces
                    else f"{pad}if ({rng.choice(_WORDS)}) {{\n"
                )
                block(depth + 1, rng.randrange(1, 25))
                if braces:
                    out.append(f"{pad}}}\n")

    for k in range(rng.randrange(1, 8)):
        out.append(f"def f{k}(x):\n" if not braces else f"function f{k}(x) {{\n")
        block(1, rng.randrange(10, 80))
        out.append("\n" if not braces else "}\n")
    return "".join(out)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 10**9), st.sampled_from([1500, 4000, 20000]))
def test_fold_markers_name_lines_that_exist_and_no_structured_fold_exceeds_the_bound(
    seed: int, budget: int
) -> None:
    text = nested_code(seed)
    shrunk = shrink_texts([text], budget, HINT, above=ABOVE)
    if shrunk is None:
        return
    (preview,) = shrunk.texts
    assert len(preview) <= budget
    assert shrunk.report.strategy in ("text:outline-python", "text:outline-js"), shrunk.report.strategy
    assert rebuild(preview, text) == text
    n = len(split_lines(text))
    for first, last, _ in folds(preview):
        assert 1 <= first <= last <= n
    if budget == BUDGET:
        assert_affordable_folds(preview, text)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(sorted(LOCKS)), st.integers(3, 700), st.sampled_from([1500, 4000, 20000]))
def test_lock_outlines_fit_and_rebuild_exactly(kind: str, count: int, budget: int) -> None:
    text = LOCKS[kind](count)
    shrunk = shrink_texts([text], budget, HINT, above=ABOVE)
    if shrunk is None:
        return
    (preview,) = shrunk.texts
    assert len(preview) <= budget and rebuild(preview, text) == text
    for first, last, _ in folds(preview):
        assert 1 <= first <= last <= len(split_lines(text))
