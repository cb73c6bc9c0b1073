"""Every client snippet in docs/clients.md, read out of the doc itself: parsed, shape-checked, and run.

The JSON configs are started exactly as written (placeholders replaced by a temp repository and a temp
bin directory) and must answer MCP through `wrap`; the Claude Code commands run with the real Claude Code
CLI (`claude mcp list` must report the server connected) and the Inspector commands with the real MCP
Inspector CLI, both installed from npm by scripts/install-test-deps.sh. HOME is a temp directory: nothing
of the user's own configuration is read or written, and no login is needed.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

import mcpsqueeze
from rawclient import ROOT, RawClient, require_node_paths

# The documented configs wrap mcp-server-git (PyPI): end-to-end tests against a public server.
pytestmark = pytest.mark.slow

DOC = ROOT / "docs" / "clients.md"
# Every Inspector command in the docs names the major version scripts/install-test-deps.sh installs (an
# unpinned `npx @modelcontextprotocol/inspector` may run a cached 0.x that hands `-e` to the server).
_PINNED = re.search(
    r"^INSPECTOR_VERSION=(\d+)\.", (ROOT / "scripts" / "install-test-deps.sh").read_text(), re.M
)
assert _PINNED is not None
INSPECTOR_MAJOR = _PINNED.group(1)
BIN_PLACEHOLDER = "/home/you/.local/bin/"
REPO_PLACEHOLDERS = ("/path/to/repo", "${workspaceFolder}")
CONFIG_PLACEHOLDER = "/path/to/config.toml"


def snippets() -> dict[str, tuple[str, str]]:
    """name -> (language, text) for each `<!-- snippet: NAME -->` followed by a fenced block."""
    found = re.findall(r"<!-- snippet: ([\w-]+) -->\n```(\w+)\n(.*?)\n```", DOC.read_text(), re.S)
    return {name: (lang, text) for name, lang, text in found}


def test_the_doc_has_every_client_snippet() -> None:
    assert set(snippets()) == {
        "claude-code-add", "claude-code-mcp-json", "claude-desktop", "cursor", "vscode", "inspector",
        "claude-code-compress", "inspector-compress", "python-sdk-compress", "inspector-variables",
    }  # fmt: skip


@dataclass
class World:
    """A temp HOME, a bin directory standing in for ~/.local/bin, and a git repository to serve."""

    home: Path
    bin: Path
    repo: Path
    env: dict[str, str]

    def fill(self, text: str) -> str:
        text = text.replace(BIN_PLACEHOLDER, f"{self.bin}/")
        for placeholder in REPO_PLACEHOLDERS:
            text = text.replace(placeholder, str(self.repo))
        return text.replace(CONFIG_PLACEHOLDER, str(self.home / "config.toml"))


@pytest.fixture
def world(tmp_path: Path) -> World:
    paths = require_node_paths("PY_SERVERS_BIN", "NODE22")
    home, bindir, repo = tmp_path / "home", tmp_path / "bin", tmp_path / "repo"
    home.mkdir()
    bindir.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    # `mcpsqueeze` as pipx would put it on PATH, running THIS tree (clients start servers with a clean
    # environment, so PYTHONPATH is set inside the script, not inherited).
    src = Path(mcpsqueeze.__file__).resolve().parents[1]
    launcher = bindir / "mcpsqueeze"
    launcher.write_text(
        f'#!/bin/sh\nPYTHONPATH={shlex.quote(str(src))} exec {sys.executable} -m mcpsqueeze.cli "$@"\n'
    )
    launcher.chmod(0o755)
    (bindir / "mcp-server-git").symlink_to(Path(paths["PY_SERVERS_BIN"]) / "mcp-server-git")
    node_dir = str(Path(paths["NODE22"]).parent)
    env = {
        "HOME": str(home),
        "PATH": os.pathsep.join([str(bindir), node_dir, "/usr/local/bin", "/usr/bin", "/bin"]),
        "LANG": "C.UTF-8",
        # Claude Code: no update checks, telemetry or error reports (traffic stays on this machine).
        "DISABLE_AUTOUPDATER": "1",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_TELEMETRY": "1",
        "DISABLE_ERROR_REPORTING": "1",
        "CI": os.environ.get("CI", ""),
    }
    return World(home, bindir, repo, env)


# -- the JSON configs: the shape each client documents, and they run --------------------------------------


def _stdio_entry(entry: dict[str, Any], extra_keys: set[str]) -> None:
    assert set(entry) <= {"command", "args", "env"} | extra_keys, entry
    assert isinstance(entry["command"], str) and entry["command"]
    assert isinstance(entry["args"], list) and all(isinstance(a, str) for a in entry["args"])
    assert entry["args"][0] == "wrap"  # mcpsqueeze in front of the server command
    assert all(isinstance(k, str) and isinstance(v, str) for k, v in entry.get("env", {}).items())


# name -> (top-level key, extra keys allowed in an entry, needs "type": "stdio", command must be absolute)
SHAPES = {
    "claude-code-mcp-json": ("mcpServers", {"type"}, False, False),  # .mcp.json
    "claude-desktop": ("mcpServers", set(), False, True),  # claude_desktop_config.json, no shell PATH
    "cursor": ("mcpServers", {"type"}, False, True),  # ~/.cursor/mcp.json
    "vscode": ("servers", {"type", "envFile"}, True, True),  # .vscode/mcp.json
}


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_json_snippet_has_the_clients_shape_and_its_command_answers_mcp(name: str, world: World) -> None:
    lang, text = snippets()[name]
    assert lang == "json"
    config = json.loads(text)
    key, extra, typed, absolute = SHAPES[name]
    assert set(config) <= {key, "inputs"}, config
    (server,) = config[key].values()
    _stdio_entry(server, extra)
    if typed:
        assert server["type"] == "stdio"
    if "type" in server:
        assert server["type"] == "stdio"
    if absolute:
        assert server["command"].startswith("/") and server["args"][
            server["args"].index("--") + 1
        ].startswith("/")

    entry = json.loads(world.fill(text))[key]["git"]
    with RawClient([entry["command"], *entry["args"]], env={**world.env, **entry.get("env", {})}) as client:
        client.initialize()
        tools = [t["name"] for t in client.result("tools/list")["tools"]]
        status = client.call("git_status", {"repo_path": str(world.repo)})
        assert client.close() == 0
    assert "git_status" in tools and "squeeze_recover" in tools
    assert "On branch" in status["content"][0]["text"]


# -- Claude Code, for real --------------------------------------------------------------------------------


def _claude(world: World, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    claude = require_node_paths("CLAUDE_BIN")["CLAUDE_BIN"]
    return subprocess.run(
        [claude, *args], cwd=cwd, env=world.env, capture_output=True, text=True, timeout=120
    )


def _connected(listing: str, name: str) -> bool:
    return any(line.startswith(f"{name}: ") and "Connected" in line for line in listing.splitlines())


@pytest.mark.parametrize("name", ["claude-code-add", "claude-code-compress"])
def test_claude_code_mcp_add_as_documented_is_reported_connected(
    world: World, tmp_path: Path, name: str
) -> None:
    add, listing = snippets()[name][1].splitlines()
    assert listing.startswith("claude mcp list")
    project = tmp_path / "project"
    project.mkdir()
    argv = shlex.split(world.fill(add))
    assert argv[:3] == ["claude", "mcp", "add"]
    added = _claude(world, *argv[1:], cwd=project)
    assert added.returncode == 0, added.stdout + added.stderr
    listed = _claude(world, "mcp", "list", cwd=project)
    assert _connected(listed.stdout, "git"), listed.stdout + listed.stderr


def test_claude_code_project_mcp_json_as_documented_is_reported_connected(
    world: World, tmp_path: Path
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / ".mcp.json").write_text(world.fill(snippets()["claude-code-mcp-json"][1]))
    # The user's one-time approval of project servers, given here in the temp HOME's settings.
    (world.home / ".claude").mkdir()
    (world.home / ".claude" / "settings.json").write_text('{"enableAllProjectMcpServers": true}')
    listed = _claude(world, "mcp", "list", cwd=project)
    assert _connected(listed.stdout, "git"), listed.stdout + listed.stderr


def test_claude_code_reports_a_broken_wrap_command_as_failed(world: World, tmp_path: Path) -> None:
    """The check above can fail: a server command that does not exist is not reported connected."""
    project = tmp_path / "project"
    project.mkdir()
    added = _claude(
        world, "mcp", "add", "git", "--", "mcpsqueeze", "wrap", "--", "no-such-server", cwd=project
    )
    assert added.returncode == 0
    listed = _claude(world, "mcp", "list", cwd=project)
    assert "git: " in listed.stdout and not _connected(listed.stdout, "git")


# -- the MCP Inspector CLI, for real (it drops the `--` before the server command) -------------------------


def _inspector(world: World, snippet: str) -> list[Any]:
    paths = require_node_paths("INSPECTOR_JS", "NODE22")
    outputs = []
    for line in snippets()[snippet][1].splitlines():
        argv = shlex.split(world.fill(line))
        assert argv[:3] == ["npx", f"@modelcontextprotocol/inspector@{INSPECTOR_MAJOR}", "--cli"]
        done = subprocess.run(
            [paths["NODE22"], paths["INSPECTOR_JS"], *argv[2:]],
            cwd=world.home,
            env=world.env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stdout + done.stderr
        assert "No such option" not in done.stdout + done.stderr
        outputs.append(json.loads(done.stdout[: done.stdout.rindex("}") + 1]))
    return outputs


def test_inspector_cli_lists_and_calls_tools_through_wrap_as_documented(world: World) -> None:
    listing, called = _inspector(world, "inspector")
    assert {"git_status", "squeeze_recover"} <= {t["name"] for t in listing["tools"]}
    assert called["isError"] is False and "On branch" in called["content"][0]["text"]


def test_inspector_cli_passes_wrap_options_as_variables_as_documented(world: World) -> None:
    (world.home / "config.toml").write_text('[defaults]\nretention = "7d"\n')
    (listing,) = _inspector(world, "inspector-variables")
    assert {"git_status", "squeeze_recover"} <= {t["name"] for t in listing["tools"]}


def test_every_inspector_command_in_the_docs_is_pinned_to_the_installed_major_version() -> None:
    for page in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        for command in re.findall(r"npx (@modelcontextprotocol/inspector\S*)", page.read_text()):
            assert command == f"@modelcontextprotocol/inspector@{INSPECTOR_MAJOR}", page


def test_inspector_cli_lists_and_invokes_the_compressed_tools_as_documented(world: World) -> None:
    listing, called = _inspector(world, "inspector-compress")
    assert [t["name"] for t in listing["tools"]] == [
        "git_get_tool_schema",
        "git_invoke_tool",
        "squeeze_recover",
    ]
    assert (
        "git_status(repo_path: string): Shows the working tree status" in listing["tools"][0]["description"]
    )
    assert called["isError"] is False and "On branch" in called["content"][0]["text"]


def test_the_python_sdk_snippet_lists_and_invokes_the_compressed_tools(world: World, tmp_path: Path) -> None:
    lang, code = snippets()["python-sdk-compress"]
    assert lang == "python"
    script = tmp_path / "snippet.py"
    script.write_text(world.fill(code))
    done = subprocess.run(
        [sys.executable, str(script)], env=world.env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stdout + done.stderr
    first, *rest = done.stdout.splitlines()
    assert first == "['git_get_tool_schema', 'git_invoke_tool', 'squeeze_recover']"
    assert "On branch" in "\n".join(rest)


def test_the_readme_shows_the_tested_snippets() -> None:
    readme = (ROOT / "README.md").read_text()
    add = snippets()["claude-code-add"][1].splitlines()[0]
    assert f"```bash\n{add}\n```" in readme
    (config,) = [json.loads(b) for b in re.findall(r"```json\n(.*?)\n```", readme, re.S) if "mcpServers" in b]
    assert config == json.loads(snippets()["claude-desktop"][1])


def test_inspector_cli_calls_the_short_recover_listing_with_listed_and_unlisted_arguments(
    world: World, tmp_path: Path
) -> None:
    """The recover tool lists four arguments (issue 21 item 5); a real client still passes the others
    (the schema does not forbid them), and a wrong one gets an error that teaches the right call."""
    paths = require_node_paths("INSPECTOR_JS", "NODE22")
    wrap = [str(world.bin / "mcpsqueeze"), "wrap", "--recovery-dir", str(tmp_path / "rec")]
    server = [*wrap, sys.executable, "-m", "mcpsqueeze.demo.server"]

    def call(tool: str, *args: str, ok: bool = True) -> dict[str, Any]:
        argv = [paths["NODE22"], paths["INSPECTOR_JS"], "--cli", *server, "--method", "tools/call"]
        argv += ["--tool-name", tool, *(x for a in args for x in ("--tool-arg", a))]
        done = subprocess.run(
            argv, cwd=world.home, env=world.env, capture_output=True, text=True, timeout=120
        )
        assert (done.returncode == 0) == ok, done.stdout + done.stderr  # it exits 5 on an isError result
        found: dict[str, Any] = json.loads(done.stdout[: done.stdout.rindex("}") + 1])
        return found

    shown = call("read_file", "path=notes.txt")
    rid = shown["_meta"]["truncation"]["response_id"]
    assert f'"response_id":"{rid}","lines":"' in shown["content"][0]["text"]  # the outline's exact call
    lines = call("squeeze_recover", f"response_id={rid}", "lines=1-3,5")
    assert lines["isError"] is False and f"2 parts of {rid} follow" in lines["content"][0]["text"]
    found = call("squeeze_recover", f"response_id={rid}", "grep=proxy", "context=0", "ignore_case=true")
    assert found["isError"] is False and "lines match grep /proxy/i" in found["content"][0]["text"]
    wrong = call("squeeze_recover", f"response_id={rid}", "line=3", ok=False)
    assert wrong["isError"] is True and "did you mean 'lines'?" in wrong["content"][0]["text"]
