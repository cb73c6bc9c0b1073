"""An OAuth client secret file another user controls is refused, as a token file is.

`--oauth-client-secret-file` gets the token file's check (`mcpsqueeze._trusted`): a regular file of ours,
0600 or narrower, in a directory no one else can write (a file owned by another uid, or in a 0777
directory where anyone could swap it, is refused whatever its mode).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from mcpsqueeze._errors import UsageError
from mcpsqueeze.settings import OAuthClient
from memwrap import Completed, run_cli


def _secret(directory: Path) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "secret"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    os.write(fd, b"s3cret\n")
    os.close(fd)
    return path


def _wrap(secret: Path) -> Completed:
    return run_cli(
        "wrap",
        "--oauth-client-id",
        "app",
        "--oauth-client-secret-file",
        str(secret),
        "--",
        "https://e.test/mcp",
    )


def test_a_secret_file_in_a_directory_anyone_can_write_is_refused(tmp_path: Path) -> None:
    directory = tmp_path / "open"
    secret = _secret(directory)
    directory.chmod(0o777)
    with pytest.raises(UsageError, match="replace it"):
        OAuthClient(client_id="app", client_secret_file=secret).client_secret()
    done = _wrap(secret)
    assert done.returncode == 2, done.stderr
    assert str(directory) in done.stderr and "Traceback" not in done.stderr


def test_a_secret_file_owned_by_another_uid_is_refused(tmp_path: Path) -> None:
    if os.geteuid() != 0:
        pytest.skip("giving a file to another uid needs root")
    secret = _secret(tmp_path / "private")
    os.chown(secret, 65534, 65534)
    with pytest.raises(UsageError, match="owned by uid 65534"):
        OAuthClient(client_id="app", client_secret_file=secret).client_secret()
    done = _wrap(secret)
    assert done.returncode == 2, done.stderr
    assert "owned by uid 65534" in done.stderr


def test_a_secret_file_of_ours_in_a_private_directory_is_read(tmp_path: Path) -> None:
    secret = _secret(tmp_path / "private")
    assert OAuthClient(client_id="app", client_secret_file=secret).client_secret() == "s3cret"
