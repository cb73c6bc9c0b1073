from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from mcpsqueeze._errors import RecoveryError
from mcpsqueeze.recovery import ensure_private_dir

from .conftest import FOREIGN_UID, needs_root


def _mode(path: Path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def test_a_missing_directory_is_created_0700_with_its_parents(tmp_path: Path) -> None:
    target = tmp_path / "a" / "b" / "recovery"
    result = ensure_private_dir(target)
    assert result == target.resolve()
    assert result.is_absolute()
    assert _mode(target) == 0o700


def test_the_directory_is_0700_even_under_a_restrictive_umask(tmp_path: Path) -> None:
    old = os.umask(0o277)
    try:
        ensure_private_dir(tmp_path / "recovery")
    finally:
        os.umask(old)
    assert _mode(tmp_path / "recovery") == 0o700


def test_an_existing_private_directory_is_accepted_and_left_as_it_is(tmp_path: Path) -> None:
    target = tmp_path / "recovery"
    target.mkdir(mode=0o700)
    (target / "keep").write_text("x")
    assert ensure_private_dir(target) == target.resolve()
    assert (target / "keep").read_text() == "x"


def test_a_relative_path_comes_back_absolute(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert ensure_private_dir(Path("rel")) == tmp_path.resolve() / "rel"


def test_a_symlinked_directory_is_refused(tmp_path: Path) -> None:
    real = ensure_private_dir(tmp_path / "real")
    link = tmp_path / "link"
    link.symlink_to(real)
    with pytest.raises(RecoveryError, match="is a symlink"):
        ensure_private_dir(link)


def test_a_dangling_symlink_is_refused_rather_than_created_through(tmp_path: Path) -> None:
    link = tmp_path / "link"
    link.symlink_to(tmp_path / "elsewhere")
    with pytest.raises(RecoveryError, match="symlink"):
        ensure_private_dir(link)
    assert not (tmp_path / "elsewhere").exists()


@pytest.mark.parametrize("mode", [0o770, 0o702, 0o1777])
def test_a_group_or_world_writable_directory_is_refused_and_not_chmodded(tmp_path: Path, mode: int) -> None:
    target = tmp_path / "shared"
    target.mkdir()
    target.chmod(mode)
    with pytest.raises(RecoveryError, match="chmod 700"):
        ensure_private_dir(target)
    assert _mode(target) == mode


def test_a_file_where_the_directory_should_be_is_refused(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("")
    with pytest.raises(RecoveryError, match="not a directory"):
        ensure_private_dir(tmp_path / "file")


@needs_root
def test_a_directory_owned_by_another_user_is_refused_and_left_alone(tmp_path: Path) -> None:
    target = tmp_path / "theirs"
    target.mkdir(mode=0o700)
    os.chown(target, FOREIGN_UID, FOREIGN_UID)
    with pytest.raises(RecoveryError, match=f"owned by uid {FOREIGN_UID}"):
        ensure_private_dir(target)
    st = os.stat(target)
    assert (st.st_uid, stat.S_IMODE(st.st_mode)) == (FOREIGN_UID, 0o700)


def test_a_group_or_world_readable_directory_is_used_with_a_warning_that_says_how_to_fix_it(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    from mcpsqueeze.core._services import build_store
    from mcpsqueeze.settings._settings import Settings

    loose = tmp_path / "rec"
    loose.mkdir(mode=0o755)
    loose.chmod(0o755)
    with caplog.at_level("WARNING", logger="mcpsqueeze"):
        store = build_store(Settings(target=["true"], recovery_dir=loose))
    assert store is not None
    assert f"chmod 700 {loose}" in caplog.text and "0755" in caplog.text


def test_a_private_directory_gets_no_warning(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    from mcpsqueeze.core._services import build_store
    from mcpsqueeze.settings._settings import Settings

    with caplog.at_level("DEBUG", logger="mcpsqueeze"):
        build_store(Settings(target=["true"], recovery_dir=tmp_path / "rec"))
    assert caplog.text == ""
