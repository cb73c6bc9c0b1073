from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest

from mcpsqueeze._errors import RecoveryError
from mcpsqueeze.recovery import CleanReport, clean_directory, new_response_id

from .conftest import FOREIGN_UID, age, needs_root, plant

DAY = 86400.0
NOW = time.time()


def _tmp(directory: Path, data: bytes = b"partial") -> Path:
    path = directory / f".mcpsqueeze-{new_response_id()}.json.tmp"
    path.write_bytes(data)
    return path


def test_files_older_than_max_age_are_deleted_and_fresh_ones_kept(rec_dir: Path) -> None:
    old, fresh = plant(rec_dir, b"old!"), plant(rec_dir, b"fresh")
    age(old, DAY + 1, NOW)
    age(fresh, DAY - 60, NOW)
    report = clean_directory(rec_dir, max_age=DAY, now=NOW)
    assert not old.exists()
    assert fresh.exists()
    assert report == CleanReport(
        deleted=[old.name], bytes_freed=4, kept=1, kept_bytes=5, errors=[], dry_run=False
    )


def test_other_names_are_never_touched_however_old(rec_dir: Path) -> None:
    others = [
        rec_dir / "notes.txt",
        rec_dir / "mcpsqueeze-XYZ.json",
        rec_dir / f"mcpsqueeze-{new_response_id()}.json.bak",
        rec_dir / f"x-mcpsqueeze-{new_response_id()}.json",
        rec_dir / f"mcpsqueeze-{new_response_id().upper()}.json",
    ]
    for path in others:
        path.write_text("keep me")
        age(path, 30 * DAY, NOW)
    report = clean_directory(rec_dir, max_age=0, max_bytes=0, now=NOW)
    assert all(path.exists() for path in others)
    assert report.deleted == []
    assert report.kept == 0


def test_subdirectories_are_not_descended_into(rec_dir: Path) -> None:
    sub = rec_dir / "sub"
    sub.mkdir()
    inner = plant(sub)
    age(inner, 30 * DAY, NOW)
    clean_directory(rec_dir, max_age=DAY, now=NOW)
    assert inner.exists()


def test_a_symlink_is_neither_followed_nor_is_its_target_deleted(rec_dir: Path, tmp_path: Path) -> None:
    outside_dir = tmp_path / "outside"
    outside_dir.mkdir()
    target = plant(outside_dir, b"not yours to delete")
    age(target, 30 * DAY, NOW)
    link = rec_dir / f"mcpsqueeze-{new_response_id()}.json"
    link.symlink_to(target)
    age(link, 30 * DAY, NOW)
    dry = clean_directory(rec_dir, max_age=0, max_bytes=0, dry_run=True, now=NOW)
    report = clean_directory(rec_dir, max_age=0, max_bytes=0, now=NOW)
    assert target.read_bytes() == b"not yours to delete"
    assert link.is_symlink()
    assert dry.deleted == report.deleted == []
    assert (report.kept, report.errors) == (0, [])


def test_a_fifo_or_directory_with_our_name_is_left_alone(rec_dir: Path) -> None:
    fifo = rec_dir / f"mcpsqueeze-{new_response_id()}.json"
    os.mkfifo(fifo, 0o600)
    sub = rec_dir / f".mcpsqueeze-{new_response_id()}.json.tmp"
    sub.mkdir()
    for path in (fifo, sub):
        age(path, 30 * DAY, NOW)
    dry = clean_directory(rec_dir, max_age=0, dry_run=True, now=NOW)
    report = clean_directory(rec_dir, max_age=0, now=NOW)
    assert fifo.exists()
    assert sub.is_dir()
    assert dry.deleted == report.deleted == []
    assert report.errors == []


def test_a_tmp_file_is_kept_for_an_hour_even_with_a_shorter_max_age(rec_dir: Path) -> None:
    writing, stale = _tmp(rec_dir), _tmp(rec_dir)
    age(writing, 3000, NOW)
    age(stale, 3700, NOW)
    report = clean_directory(rec_dir, max_age=60, now=NOW)
    assert writing.exists()
    assert not stale.exists()
    assert report.deleted == [stale.name]


def test_a_tmp_file_waits_for_max_age_when_that_is_longer_than_an_hour(rec_dir: Path) -> None:
    tmp = _tmp(rec_dir)
    age(tmp, 2 * 3600, NOW)
    clean_directory(rec_dir, max_age=DAY, now=NOW)
    assert tmp.exists()
    age(tmp, DAY + 1, NOW)
    clean_directory(rec_dir, max_age=DAY, now=NOW)
    assert not tmp.exists()


def test_max_bytes_deletes_the_oldest_files_first_until_the_total_fits(rec_dir: Path) -> None:
    files = [plant(rec_dir, b"x" * 100) for _ in range(5)]
    for hours, path in zip([5, 4, 3, 2, 1], files, strict=True):
        age(path, hours * 3600, NOW)
    report = clean_directory(rec_dir, max_age=DAY, max_bytes=250, now=NOW)
    assert [path.exists() for path in files] == [False, False, False, True, True]
    assert report.deleted == [files[0].name, files[1].name, files[2].name]
    assert (report.bytes_freed, report.kept, report.kept_bytes) == (300, 2, 200)


def test_max_bytes_never_deletes_a_tmp_file_still_being_written(rec_dir: Path) -> None:
    writing = _tmp(rec_dir, b"x" * 1000)
    age(writing, 600, NOW)
    final = plant(rec_dir, b"y" * 10)
    age(final, 60, NOW)
    report = clean_directory(rec_dir, max_age=DAY, max_bytes=100, now=NOW)
    assert writing.exists()
    assert not final.exists()
    assert report.kept_bytes == 1000


def test_a_dry_run_reports_the_same_but_deletes_nothing(rec_dir: Path) -> None:
    files = [plant(rec_dir, b"x" * 10) for _ in range(3)]
    for days, path in zip([3, 2, 0], files, strict=True):
        age(path, days * DAY + 1, NOW)
    dry = clean_directory(rec_dir, max_age=DAY, dry_run=True, now=NOW)
    assert all(path.exists() for path in files)
    assert dry.dry_run is True
    real = clean_directory(rec_dir, max_age=DAY, now=NOW)
    assert (sorted(dry.deleted), dry.bytes_freed, dry.kept, dry.kept_bytes) == (
        sorted(real.deleted),
        real.bytes_freed,
        real.kept,
        real.kept_bytes,
    )
    assert sorted(real.deleted) == sorted([files[0].name, files[1].name])


def test_two_cleanups_at_once_both_succeed_and_delete_each_file_once(rec_dir: Path) -> None:
    files = [plant(rec_dir) for _ in range(300)]
    for path in files:
        age(path, 2 * DAY, NOW)
    reports: list[CleanReport] = []
    failures: list[BaseException] = []
    barrier = threading.Barrier(4)

    def run() -> None:
        try:
            barrier.wait()
            reports.append(clean_directory(rec_dir, max_age=DAY, now=NOW))
        except BaseException as exc:
            failures.append(exc)

    threads = [threading.Thread(target=run) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []
    assert all(report.errors == [] for report in reports)
    deleted = [name for report in reports for name in report.deleted]
    assert sorted(deleted) == sorted(path.name for path in files)
    assert os.listdir(rec_dir) == []


def test_a_symlinked_directory_is_refused(rec_dir: Path, tmp_path: Path) -> None:
    old = plant(rec_dir)
    age(old, 2 * DAY, NOW)
    (tmp_path / "alias").symlink_to(rec_dir)
    with pytest.raises(RecoveryError, match="symlink"):
        clean_directory(tmp_path / "alias", max_age=DAY, now=NOW)
    assert old.exists()


def test_a_group_writable_directory_is_refused(rec_dir: Path) -> None:
    old = plant(rec_dir)
    age(old, 2 * DAY, NOW)
    rec_dir.chmod(0o770)
    with pytest.raises(RecoveryError, match="writable by group or others"):
        clean_directory(rec_dir, max_age=DAY, now=NOW)
    assert old.exists()


@needs_root
def test_a_directory_owned_by_another_user_is_refused(rec_dir: Path) -> None:
    old = plant(rec_dir)
    age(old, 2 * DAY, NOW)
    os.chown(rec_dir, FOREIGN_UID, FOREIGN_UID)
    with pytest.raises(RecoveryError, match="owned by uid"):
        clean_directory(rec_dir, max_age=DAY, now=NOW)
    assert old.exists()


def test_a_missing_directory_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(RecoveryError, match="does not exist"):
        clean_directory(tmp_path / "nope", max_age=DAY)


@pytest.mark.parametrize("limit", [["--max-age", "-1"], ["--max-bytes", "-1"]])
def test_negative_limits_are_usage_errors_and_delete_nothing(rec_dir: Path, limit: list[str]) -> None:
    from click.testing import CliRunner

    from mcpsqueeze.cli._main import main

    old = plant(rec_dir)
    age(old, 2 * DAY, time.time())
    done = CliRunner().invoke(main, ["clean", str(rec_dir), *limit])
    assert done.exit_code == 2, done.output
    assert old.exists()


def test_without_now_the_current_time_is_used(rec_dir: Path) -> None:
    fresh = plant(rec_dir)
    old = plant(rec_dir)
    age(old, 2 * DAY, time.time())
    clean_directory(rec_dir, max_age=DAY)
    assert fresh.exists()
    assert not old.exists()
