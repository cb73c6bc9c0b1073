"""Token files: odd files at the token path get a clear refusal, never a traceback or a hang."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from mcpsqueeze._errors import MCPSqueezeError
from mcpsqueeze.transports._bearer import load_tokens


def _private(path: Path) -> Path:
    path.mkdir(mode=0o700)
    return path


def test_a_token_file_that_is_a_symlink_is_refused_with_a_clear_message(tmp_path: Path) -> None:
    real = tmp_path / "real-token"
    real.write_text("x" * 64)
    real.chmod(0o600)
    link = _private(tmp_path / "auth") / "token"
    link.symlink_to(real)
    with pytest.raises(MCPSqueezeError, match="symlink") as refused:
        load_tokens(link)
    assert str(link) in str(refused.value)


def test_a_token_file_that_is_a_fifo_is_refused_without_hanging(tmp_path: Path) -> None:
    fifo = _private(tmp_path / "auth") / "token"
    os.mkfifo(fifo, 0o600)
    with pytest.raises(MCPSqueezeError, match="regular 0600 file"):
        load_tokens(fifo)


def test_a_world_writable_token_directory_is_named_as_the_token_directory(tmp_path: Path) -> None:
    loose = tmp_path / "auth"
    loose.mkdir()
    loose.chmod(0o777)
    with pytest.raises(MCPSqueezeError) as refused:
        load_tokens(loose / "token")
    message = str(refused.value)
    assert f"token directory {loose}" in message and "recovery directory" not in message
    assert not (loose / "token").exists()


def test_a_new_token_is_64_hex_characters_in_a_0600_file(tmp_path: Path) -> None:
    (token,) = load_tokens(tmp_path / "auth" / "token").principals
    assert len(token) == 64 and oct((tmp_path / "auth" / "token").stat().st_mode & 0o777) == "0o600"
    assert (tmp_path / "auth" / "token").read_bytes() == token + b"\n"
    assert set(load_tokens(tmp_path / "auth" / "token").principals) == {token}
