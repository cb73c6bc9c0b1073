"""Outline previews through the real proxy in front of real servers (npm server-filesystem, PyPI
mcp-server-git): every landmark is visible, and recovering each fold by its lines rebuilds the
original byte for byte."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from mcpsqueeze._lines import split_lines
from mcpsqueeze.shrink import landmarks
from rawclient import ROOT, RawClient, cli, require_node_paths, text

pytestmark = pytest.mark.slow

FOLD = re.compile(r"^[ \t]*\[lines? (\d+)(?:-(\d+))? folded(?:: [^\]]*)?\]\n?\Z")


def _through(tmp_path: Path, server: list[str]) -> list[str]:
    return cli("wrap", "--recovery-dir", str(tmp_path / "rec"), "--", *server)


def _rebuild_by_recovering(client: RawClient, preview: str, response_id: str) -> str:
    """Each fold marker replaced by what squeeze_recover returns for its lines."""
    header, *body = split_lines(preview)
    assert header.startswith("[mcpsqueeze] Outline of ")
    out = []
    for line in body:
        match = FOLD.match(line)
        if match is None:
            out.append(line)
            continue
        lines = f"{match.group(1)}-{match.group(2) or match.group(1)}"
        got = client.call("squeeze_recover", {"response_id": response_id, "lines": lines})
        out.append(text(got))
    return "".join(out)


def _check(got: dict[str, object], original: str, client: RawClient) -> None:
    preview = text(got)
    assert len(preview) <= 20_000 < len(original)
    shown = set(preview.split("\n"))
    marks = landmarks(original)
    assert marks and all(mark in shown for mark in marks)
    response_id = got["_meta"]["truncation"]["response_id"]  # type: ignore[index]
    assert _rebuild_by_recovering(client, preview, response_id) == original


def test_a_big_source_file_read_through_server_filesystem_is_an_outline_that_recovers_by_lines(
    tmp_path: Path,
) -> None:
    paths = require_node_paths("NODE22", "FILESYSTEM_JS")
    root = tmp_path / "files"
    root.mkdir()
    shrink = ROOT / "src" / "mcpsqueeze" / "shrink"
    source = (shrink / "_priced.py").read_text() + (shrink / "_limits.py").read_text()
    (root / "big.py").write_text(source)
    server = [paths["NODE22"], paths["FILESYSTEM_JS"], str(root)]
    with RawClient(_through(tmp_path, server)) as client:
        client.initialize()
        got = client.call("read_text_file", {"path": str(root / "big.py")})
        assert got["structuredContent"] == {"content": source}  # never modified
        _check(got, source, client)


def test_a_long_git_log_through_mcp_server_git_keeps_every_commit_and_subject(tmp_path: Path) -> None:
    git_server = ROOT / ".cache" / "pyservers" / "bin" / "mcp-server-git"
    if not git_server.exists():
        pytest.skip("run scripts/install-test-deps.sh first (mcp-server-git)")
    repo = tmp_path / "repo"
    repo.mkdir()
    env = {"GIT_AUTHOR_NAME": "A", "GIT_AUTHOR_EMAIL": "a@example.invalid", "GIT_COMMITTER_NAME": "A"}
    env |= {"GIT_COMMITTER_EMAIL": "a@example.invalid", "HOME": str(tmp_path), "PATH": "/usr/bin:/bin"}
    subprocess.run(["git", "init", "-q", str(repo)], check=True, env=env)
    script = "".join(
        f"git commit -q --allow-empty -m 'Change {i}: adjust the parser for case {i}' "
        f"-m 'Longer body for change {i}, explaining why the parser needed it.' -m 'Refs #{i}'\n"
        for i in range(100)
    )
    subprocess.run(["sh", "-c", script], cwd=repo, check=True, env=env)
    server = [str(git_server), "--repository", str(repo)]
    with RawClient(server) as direct:
        direct.initialize()
        original = text(direct.call("git_log", {"repo_path": str(repo), "max_count": 100}))
    with RawClient(_through(tmp_path, server)) as client:
        client.initialize()
        got = client.call("git_log", {"repo_path": str(repo), "max_count": 100})
        _check(got, original, client)
