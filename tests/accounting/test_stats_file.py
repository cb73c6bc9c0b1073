"""The stats file is opened like every other file of ours: no symlinks followed, created 0600."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from click.testing import CliRunner

from mcpsqueeze._errors import UsageError
from mcpsqueeze.accounting._stats import Accountant
from mcpsqueeze.cli._main import main


def test_a_new_stats_file_is_created_0600_whatever_the_umask(tmp_path: Path) -> None:
    old = os.umask(0)
    try:
        accountant = Accountant(tmp_path / "stats.jsonl")
    finally:
        os.umask(old)
    accountant.close()
    assert stat.S_IMODE((tmp_path / "stats.jsonl").stat().st_mode) == 0o600


def test_a_stats_file_that_is_a_symlink_is_refused_and_its_target_untouched(tmp_path: Path) -> None:
    target = tmp_path / "victim"
    target.write_text("keep me\n")
    link = tmp_path / "stats.jsonl"
    link.symlink_to(target)
    with pytest.raises(UsageError, match="symlink"):
        Accountant(link)
    assert target.read_text() == "keep me\n"


def test_a_stats_file_that_is_a_fifo_is_refused_without_hanging(tmp_path: Path) -> None:
    fifo = tmp_path / "stats.jsonl"
    os.mkfifo(fifo)
    with pytest.raises(UsageError, match="regular file"):
        Accountant(fifo)


def test_wrap_with_a_symlinked_stats_file_exits_2_with_a_clear_message(tmp_path: Path) -> None:
    target = tmp_path / "victim"
    target.write_text("")
    link = tmp_path / "stats.jsonl"
    link.symlink_to(target)
    done = CliRunner().invoke(
        main,
        ["wrap", "--recovery-dir", str(tmp_path / "rec"), "--stats-file", str(link), "--", "true"],
    )
    assert done.exit_code == 2, done.output
    assert "symlink" in done.output and str(link) in done.output
    assert target.read_text() == ""
