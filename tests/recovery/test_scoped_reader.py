from __future__ import annotations

import os
from pathlib import Path

import pytest

from mcpsqueeze._errors import RecoveryError, RefusedPathError
from mcpsqueeze.recovery import FileStore, new_response_id, open_recovery_file

from .conftest import FOREIGN_UID, needs_root, plant

ONLY_INSIDE = "Only recovery files"


@pytest.fixture
def stored(rec_dir: Path) -> tuple[str, Path]:
    rid = new_response_id()
    return rid, Path(FileStore(rec_dir).put(rid, b'{"content": "the original"}') or "")


def test_a_response_id_reads_its_file(rec_dir: Path, stored: tuple[str, Path]) -> None:
    rid, _ = stored
    assert open_recovery_file(rec_dir, rid) == b'{"content": "the original"}'


def test_an_absolute_path_inside_the_directory_reads_the_file(
    rec_dir: Path, stored: tuple[str, Path]
) -> None:
    _, path = stored
    assert open_recovery_file(rec_dir, str(path)) == b'{"content": "the original"}'


def test_a_bare_file_name_reads_the_file(rec_dir: Path, stored: tuple[str, Path]) -> None:
    _, path = stored
    assert open_recovery_file(rec_dir, path.name) == b'{"content": "the original"}'


def test_a_path_relative_to_the_working_directory_reads_the_file(
    rec_dir: Path, stored: tuple[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    _, path = stored
    monkeypatch.chdir(rec_dir.parent)
    assert open_recovery_file(rec_dir, f"{rec_dir.name}/{path.name}") == b'{"content": "the original"}'
    monkeypatch.chdir(rec_dir)
    assert open_recovery_file(rec_dir, f"./{path.name}") == b'{"content": "the original"}'


def test_a_missing_file_for_a_valid_id_is_an_error_but_not_a_refusal(rec_dir: Path) -> None:
    with pytest.raises(RecoveryError, match="retention cleanup") as info:
        open_recovery_file(rec_dir, new_response_id())
    assert not isinstance(info.value, RefusedPathError)


@pytest.mark.parametrize("ref", ["../../etc/passwd", "/etc/passwd", "..", "", "/", "a\0b"])
def test_paths_outside_the_directory_are_refused(rec_dir: Path, ref: str) -> None:
    with pytest.raises(RefusedPathError, match=ONLY_INSIDE):
        open_recovery_file(rec_dir, ref)


def test_a_dotdot_path_that_comes_back_inside_is_still_refused(
    rec_dir: Path, stored: tuple[str, Path]
) -> None:
    _, path = stored
    with pytest.raises(RefusedPathError, match=r"'\.\.'"):
        open_recovery_file(rec_dir, f"{rec_dir}/../{rec_dir.name}/{path.name}")


def test_a_recovery_named_file_in_another_directory_is_refused(tmp_path: Path, rec_dir: Path) -> None:
    other = tmp_path / "other"
    other.mkdir()
    outside = plant(other, b"secret")
    with pytest.raises(RefusedPathError, match="not directly in the recovery directory"):
        open_recovery_file(rec_dir, str(outside))


def test_a_planted_symlink_to_a_file_is_refused(rec_dir: Path, tmp_path: Path) -> None:
    secret = tmp_path / "secret"
    secret.write_bytes(b"secret")
    link = rec_dir / f"mcpsqueeze-{new_response_id()}.json"
    link.symlink_to(secret)
    for ref in [link.name, str(link), link.name[len("mcpsqueeze-") : -len(".json")]]:
        with pytest.raises(RefusedPathError, match="symlink"):
            open_recovery_file(rec_dir, ref)


def test_a_planted_symlink_to_a_directory_is_refused(rec_dir: Path) -> None:
    link = rec_dir / f"mcpsqueeze-{new_response_id()}.json"
    link.symlink_to("/etc")
    with pytest.raises(RefusedPathError, match="symlink"):
        open_recovery_file(rec_dir, link.name)


def test_a_path_through_a_symlinked_subdirectory_is_refused(rec_dir: Path, stored: tuple[str, Path]) -> None:
    _, path = stored
    (rec_dir / "loop").symlink_to(".")
    with pytest.raises(RefusedPathError, match=ONLY_INSIDE):
        open_recovery_file(rec_dir, str(rec_dir / "loop" / path.name))


def test_a_path_through_a_symlink_to_the_directory_is_refused(
    rec_dir: Path, stored: tuple[str, Path], tmp_path: Path
) -> None:
    _, path = stored
    (tmp_path / "alias").symlink_to(rec_dir)
    with pytest.raises(RefusedPathError):
        open_recovery_file(rec_dir, str(tmp_path / "alias" / path.name))


def test_a_symlinked_recovery_directory_is_refused(
    rec_dir: Path, stored: tuple[str, Path], tmp_path: Path
) -> None:
    rid, _ = stored
    (tmp_path / "alias").symlink_to(rec_dir)
    with pytest.raises(RefusedPathError, match="is a symlink"):
        open_recovery_file(tmp_path / "alias", rid)


def test_a_fifo_is_refused_without_blocking(rec_dir: Path) -> None:
    fifo = rec_dir / f"mcpsqueeze-{new_response_id()}.json"
    os.mkfifo(fifo, 0o600)
    with pytest.raises(RefusedPathError, match="not a regular file"):
        open_recovery_file(rec_dir, fifo.name)


def test_a_directory_with_a_recovery_name_is_refused(rec_dir: Path) -> None:
    sub = rec_dir / f"mcpsqueeze-{new_response_id()}.json"
    sub.mkdir()
    with pytest.raises(RefusedPathError, match="not a regular file"):
        open_recovery_file(rec_dir, str(sub))


def test_a_hard_link_to_an_outside_file_is_refused(rec_dir: Path, tmp_path: Path) -> None:
    secret = tmp_path / "secret"
    secret.write_bytes(b"secret")
    link = rec_dir / f"mcpsqueeze-{new_response_id()}.json"
    os.link(secret, link)
    with pytest.raises(RefusedPathError, match="hard links"):
        open_recovery_file(rec_dir, link.name)


@needs_root
def test_a_file_owned_by_another_user_is_refused(rec_dir: Path) -> None:
    path = plant(rec_dir, b"theirs")
    os.chown(path, FOREIGN_UID, FOREIGN_UID)
    with pytest.raises(RefusedPathError, match=f"owned by uid {FOREIGN_UID}"):
        open_recovery_file(rec_dir, path.name)


@pytest.mark.parametrize(
    "name", ["notes.json", "mcpsqueeze-XYZ.json", "mcpsqueeze-{rid}.json.bak", ".mcpsqueeze-{rid}.json.tmp"]
)
def test_a_file_not_named_like_a_recovery_file_is_refused(rec_dir: Path, name: str) -> None:
    name = name.format(rid=new_response_id())
    (rec_dir / name).write_bytes(b"x")
    for ref in [name, str(rec_dir / name)]:
        with pytest.raises(RefusedPathError, match="not a recovery file name"):
            open_recovery_file(rec_dir, ref)


def test_the_store_reads_through_the_same_refusals(rec_dir: Path, tmp_path: Path) -> None:
    secret = tmp_path / "secret"
    secret.write_bytes(b"secret")
    rid = new_response_id()
    (rec_dir / f"mcpsqueeze-{rid}.json").symlink_to(secret)
    with pytest.raises(RefusedPathError):
        FileStore(rec_dir).get(rid)
