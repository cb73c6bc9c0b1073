"""What the shell door cannot carry is refused up front, saying so: a server named `recover` (the
shim's own `mcpsq recover`), and an argument that is not UTF-8 text (not "a number JSON cannot carry")."""

from __future__ import annotations

import sys
from pathlib import Path

from serve_api import serve_in_process, write_token

from mcpsqueeze.bash.shim import run
from memwrap import run_cli


def test_serve_refuses_a_server_named_recover_which_the_shim_could_never_call(tmp_path: Path) -> None:
    done = run_cli(
        "serve", "--socket", str(tmp_path / "s.sock"), "--recovery-dir", str(tmp_path / "rec"),
        "-n", "recover", "--", sys.executable, "-m", "mcpsqueeze.demo.server",
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert "'recover'" in done.stderr and "mcpsq recover" in done.stderr and "rename" in done.stderr
    assert "Traceback" not in done.stderr
    assert not (tmp_path / "s.sock").exists()


def test_mcpsq_says_an_argument_that_is_not_utf8_is_not_utf8(tmp_path: Path) -> None:
    token = write_token(tmp_path / "token")
    with serve_in_process(
        "--recovery-dir", str(tmp_path / "rec"), "--listen", "127.0.0.1:0", "--token-file", str(tmp_path / "token"),
        "-n", "demo", "--", sys.executable, "-m", "mcpsqueeze.demo.server",
    ) as url:  # fmt: skip
        env = {"MCPSQUEEZE_URL": url, "MCPSQUEEZE_TOKEN_FILE": str(tmp_path / "token")}
        latin1 = b"caf\xe9".decode("utf-8", "surrogateescape")  # what Python makes of such an argv
        said = run(["demo", "echo", "--text", latin1], env)
        assert said.code == 2, said
        assert "UTF-8" in said.stderr and "NaN" not in said.stderr, said.stderr
        assert "caf\\xe9" in said.stderr  # the bytes it could not read, shown
        assert run(["demo", "echo", "--text", "café"], env).stdout == "café"
    assert token
