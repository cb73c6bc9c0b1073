"""The README's before/after, made by the product itself: check it (default) or rewrite it (--write).

    python tests/docs/readme_example.py [--write]

A real server behind the real proxy, as Claude Code meets it: `mcpsqueeze wrap -- mcp-server-git`
answers `git_diff_unstaged` on a copy of the pinned @modelcontextprotocol/server-everything package
(scripts/install-test-deps.sh puts both in .cache/) after every JavaScript file was re-indented from
four spaces to two, a reformat that touches nearly every line. The script runs the calls the README's
block shows (the diff, then the `squeeze_recover` call of one fold), renders what the model read with
the demo's transcript renderer, counts o200k tokens, and draws docs/before-after.svg from the same
numbers. Without --write it exits 1 and prints a diff when the README or the picture differ from what
the product prints today (tests/docs/test_readme.py runs it so); with --write it rewrites both.
The fold to open is, when writing, the first fold of changed lines among those the README shows; when
checking, the one the README names.
"""

from __future__ import annotations

import argparse
import difflib
import json
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mcpsqueeze.accounting._tokens import count_tokens
from mcpsqueeze.demo._transcript import Step, render_steps, shown_lines

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
PICTURE = ROOT / "docs" / "before-after.svg"
START, END = "<!-- snippet: before-after -->", "<!-- /before-after -->"
REPO_SHOWN = "~/server-everything"  # the repository's path as the README shows it
ID_SHOWN = "5f0c2a7e9b1d4c3a8e6f0b2d4a6c8e1f"  # a response id is random: the README shows this one
PREVIEW_LINES, RECOVERY_LINES = 9, 3
FOLD = re.compile(r"^\[lines (\d+)-(\d+) folded: [+-]")  # a fold of changed lines


@dataclass(frozen=True)
class Example:
    block: str  # the README's fenced block, fences included
    svg: str


@dataclass(frozen=True)
class Figures:
    """The sizes the picture draws: characters and o200k tokens of each answer."""

    files: int
    original_chars: int
    original_tokens: int
    preview_chars: int
    preview_tokens: int
    lines: str  # the range brought back
    part_lines: int
    part_tokens: int


def _paths() -> dict[str, str]:
    env = ROOT / ".cache" / "node" / "paths.env"
    if not env.exists():
        sys.exit(f"{env} is missing: run scripts/install-test-deps.sh --python first")
    pairs = (line.split("=", 1) for line in env.read_text().splitlines() if "=" in line[1:])
    found = {key: value for key, value in pairs if not key.startswith("#")}
    git_server = Path(found.get("PY_SERVERS_BIN", "")) / "mcp-server-git"
    if not git_server.exists():
        sys.exit("mcp-server-git is missing: run scripts/install-test-deps.sh --python first")
    return {"everything": str(Path(found["EVERYTHING_JS"]).parents[1]), "git": str(git_server)}


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True)


def make_repository(package: Path, repo: Path) -> None:
    """The pinned package's dist/ committed, then every .js file re-indented from 4 spaces to 2."""
    shutil.copytree(package / "dist", repo / "dist")
    _git(repo, "init", "-q")
    _git(repo, "-c", "user.name=agent", "-c", "user.email=agent@example.com", "add", ".")
    _git(repo, "-c", "user.name=agent", "-c", "user.email=agent@example.com", "commit", "-qm", "base")
    for path in sorted((repo / "dist").rglob("*.js")):
        text = path.read_text(encoding="utf-8")
        path.write_text(re.sub(r"(?m)^((?:    )+)", lambda m: "  " * (len(m.group(1)) // 4), text))


class Session:
    """A minimal MCP client over the proxy's stdio that introduces itself as Claude Code."""

    def __init__(self, argv: list[str]) -> None:
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.ids = 0
        self.request("initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                    "clientInfo": {"name": "claude-code", "version": "2.1.332"}})  # fmt: skip
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def send(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message) + "\n")
        self.proc.stdin.flush()

    def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        self.ids += 1
        self.send({"jsonrpc": "2.0", "id": self.ids, "method": method, "params": params})
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            message = json.loads(line)
            if message.get("id") == self.ids and "method" not in message:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                result: dict[str, Any] = message["result"]
                return result
        raise RuntimeError(f"the proxy closed its output before answering {method}")

    def call(self, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        return self.request("tools/call", {"name": tool, "arguments": arguments})

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(30)


def _text(result: dict[str, Any]) -> str:
    return "\n".join(b["text"] for b in result.get("content", []) if b.get("type") == "text")


def _asked(block: str) -> tuple[dict[str, Any], str] | None:
    """The diff call's arguments and the recover call's `lines`, as the README's block shows them."""
    calls = [json.loads(line.split(" ", 2)[2]) for line in block.splitlines() if line.startswith("→ ")]
    return (calls[0], calls[1]["lines"]) if len(calls) == 2 else None


def _first_fold(preview: str) -> str:
    """The first fold of changed lines that the README shows, so the reader sees the marker it opens."""
    for line in shown_lines(preview)[:PREVIEW_LINES]:
        if found := FOLD.match(line):
            return f"{found.group(1)}-{found.group(2)}"
    raise RuntimeError(f"no fold of changed lines in the preview's first {PREVIEW_LINES} lines")


def run(asked: tuple[dict[str, Any], str] | None) -> Example:
    paths = _paths()
    with tempfile.TemporaryDirectory(prefix="mcpsqueeze-readme-") as tmp:
        repo = Path(tmp) / "server-everything"
        make_repository(Path(paths["everything"]), repo)
        wrap = ["-m", "mcpsqueeze.cli", "wrap", "--quiet", "--recovery-dir", f"{tmp}/recovery", "--"]
        session = Session([sys.executable, *wrap, paths["git"], "--repository", str(repo)])
        try:
            arguments = asked[0] if asked else {"repo_path": REPO_SHOWN}
            diff = session.call("git_diff_unstaged", {**arguments, "repo_path": str(repo)})
            record = diff["_meta"]["truncation"]
            stored = json.loads(Path(record["original_response_file"]).read_text(encoding="utf-8"))
            preview = _text(diff).replace(record["response_id"], ID_SHOWN)
            lines = asked[1] if asked else _first_fold(preview)
            answer = session.call("squeeze_recover", {"response_id": record["response_id"], "lines": lines})
        finally:
            session.close()
    original, recovered = _text(stored), _text(answer)
    seen = Figures(
        files=len(re.findall(r"(?m)^diff --git ", original)),
        original_chars=len(original),
        original_tokens=count_tokens(original),
        preview_chars=len(preview),
        preview_tokens=count_tokens(preview),
        lines=lines,
        part_lines=len(shown_lines(answer["content"][0]["text"])),  # the range; a page note may follow
        part_tokens=count_tokens(recovered),
    )
    diff_note = (
        f"{seen.original_chars:,} characters ({seen.original_tokens:,} tokens) from the server; "
        f"the model reads {seen.preview_chars:,} ({seen.preview_tokens:,} tokens)"
    )
    part_note = f"{seen.part_lines} lines of the stored original ({seen.part_tokens:,} tokens)"
    steps = [
        Step("git_diff_unstaged", {**arguments, "repo_path": REPO_SHOWN}, diff_note, preview, PREVIEW_LINES),
        Step(
            "squeeze_recover", {"response_id": ID_SHOWN, "lines": lines}, part_note, recovered, RECOVERY_LINES
        ),
    ]
    return Example(f"```text\n{render_steps(steps)}\n```", svg(seen))


def svg(seen: Figures) -> str:
    """Three bars to scale: the server's answer, what the model reads, one part brought back."""
    width, left, bar, row = 760, 20, 720, 56
    rows = [
        ("git_diff_unstaged, as mcp-server-git sends it",
         seen.original_tokens, f"{seen.original_chars:,} characters", "#9aa5b1"),
        ("what Claude Code's model reads through mcpsqueeze: an outline, every fold named",
         seen.preview_tokens, f"{seen.preview_chars:,} characters", "#2f7de1"),
        (f"squeeze_recover lines {seen.lines}: one fold back, byte for byte",
         seen.part_tokens, f"{seen.part_lines} lines", "#26a269"),
    ]  # fmt: skip
    height = 44 + row * len(rows)
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="Helvetica, Arial, sans-serif" font-size="13">',
        f'<rect width="{width}" height="{height}" rx="8" fill="#ffffff" stroke="#d0d7de"/>',
        f'<text x="{left}" y="26" font-size="15" font-weight="bold" fill="#1f2328">'
        f"The diff of a {seen.files}-file reformat, in o200k tokens</text>",
    ]
    for n, (label, count, size, colour) in enumerate(rows):
        y = 44 + row * n
        length = max(3, round(bar * count / seen.original_tokens))
        out += [
            f'<text x="{left}" y="{y + 12}" fill="#1f2328">{label}</text>',
            f'<text x="{left + bar}" y="{y + 12}" fill="#1f2328" font-weight="bold" text-anchor="end">'
            f"{count:,} tokens</text>",
            f'<rect x="{left}" y="{y + 20}" width="{length}" height="16" rx="3" fill="{colour}"/>',
            f'<text x="{left + length + 8}" y="{y + 33}" fill="#57606a">{size}</text>'
            if length < bar - 160
            else f'<text x="{left + bar - 8}" y="{y + 33}" fill="#ffffff" text-anchor="end">{size}</text>',
        ]
    return "\n".join([*out, "</svg>", ""])


def _block_in(readme: str) -> str:
    if START not in readme or END not in readme:
        sys.exit(f"README.md has no {START} ... {END} section")
    return readme.split(START, 1)[1].split(END, 1)[0].strip("\n")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="rewrite README.md's block and the picture")
    write = parser.parse_args().write
    readme = README.read_text(encoding="utf-8")
    current = _block_in(readme)
    example = run(None if write else _asked(current))
    if write:
        head, rest = readme.split(START, 1)
        README.write_text(f"{head}{START}\n{example.block}\n{END}{rest.split(END, 1)[1]}", encoding="utf-8")
        PICTURE.write_text(example.svg, encoding="utf-8")
        print(f"wrote the before/after into {README.name} and {PICTURE.relative_to(ROOT)}")
        return 0
    picture = PICTURE.read_text(encoding="utf-8") if PICTURE.exists() else ""
    differ = False
    for name, was, now in (
        ("README.md", current, example.block),
        ("docs/before-after.svg", picture, example.svg),
    ):
        if was != now:
            differ = True
            sys.stdout.writelines(
                difflib.unified_diff(was.splitlines(True), now.splitlines(True), name, "now")
            )
            print()
    if differ:
        print("the product prints something else today: python tests/docs/readme_example.py --write")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
