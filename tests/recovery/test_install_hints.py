"""A missing extra is named the way the running installation adds it (pip or pipx), and
the README's test notes name every system program the suite needs."""

from __future__ import annotations

import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from mcpsqueeze._errors import install_hint
from rawclient import ROOT

SRC = ROOT / "src"


def test_the_hint_says_pipx_inject_inside_a_pipx_venv_and_pip_install_elsewhere(tmp_path: Path) -> None:
    assert (
        install_hint("redis", "redis", "/home/u/.local/pipx/venvs/mcpsqueeze")
        == "pipx inject mcpsqueeze redis"
    )
    assert (
        install_hint("redis", "redis", "/home/u/.local/share/pipx/venvs/mcpsq2") == "pipx inject mcpsq2 redis"
    )
    custom = tmp_path / "tools" / "venvs" / "mcpsqueeze"  # PIPX_HOME elsewhere: pipx's metadata file says so
    custom.mkdir(parents=True)
    assert install_hint("redis", "redis", str(custom)).startswith("pip install")
    (custom / "pipx_metadata.json").write_text("{}")
    assert install_hint("redis", "redis", str(custom)) == "pipx inject mcpsqueeze redis"
    assert install_hint("redis", "redis", "/work/clone/.venv") == "pip install 'mcpsqueeze[redis]'"


def _wrap_without_redis(python: str, tmp_path: Path) -> str:
    block = tmp_path / "block" / "redis"
    block.mkdir(parents=True)
    (block / "__init__.py").write_text('raise ImportError("no redis here")\n')
    done = subprocess.run(
        [python, "-m", "mcpsqueeze.cli", "wrap", "--recovery-url", "redis://127.0.0.1:1/0", "--", "true"],
        capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=60,
        env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "PYTHONPATH": str(block.parent)},
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    return done.stderr


@pytest.mark.skipif(sys.prefix == sys.base_prefix, reason="needs the test venv's site-packages to lend")
def test_wrap_in_a_pipx_venv_says_pipx_inject(tmp_path: Path) -> None:
    venv = tmp_path / "pipx" / "venvs" / "mcpsqueeze"  # pipx's own layout, a real venv
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    site = Path(sysconfig.get_paths(vars={"base": str(venv), "platbase": str(venv)})["purelib"])
    (site / "lend.pth").write_text(f"{SRC}\n{sysconfig.get_paths()['purelib']}\n")  # our deps, minus redis
    piped = _wrap_without_redis(str(venv / "bin" / "python"), tmp_path / "a")
    assert "--recovery-url needs the Redis client: pipx inject mcpsqueeze redis" in piped
    plain = _wrap_without_redis(sys.executable, tmp_path / "b")
    assert "--recovery-url needs the Redis client: pip install 'mcpsqueeze[redis]'" in plain


def test_the_readme_test_notes_name_haproxy_and_redis_server() -> None:
    notes = ROOT.joinpath("README.md").read_text(encoding="utf-8").split("## Development", 1)[1]
    for program in ("haproxy", "redis-server", "chromium", "jq"):
        assert f"`{program}`" in notes or f" {program}" in notes, program
    assert "apt-get install" in notes
