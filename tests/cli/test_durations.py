"""One meaning for "keep forever" on every flag that takes a lifetime (the `Duration` kind):
`--retention`, `--cache-ttl` and `clean --max-age`."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from mcpsqueeze.cli._main import main
from mcpsqueeze.recovery import ensure_private_dir, new_response_id
from mcpsqueeze.settings import Duration

DAY = 86400.0


def _old_original(directory: Path) -> Path:
    path = directory / f"mcpsqueeze-{new_response_id()}.json"
    path.write_bytes(b'{"content": []}')
    path.chmod(0o600)
    then = time.time() - 3 * DAY
    import os

    os.utime(path, (then, then))
    return path


@pytest.mark.parametrize("spelling", ["off", "never", "OFF", " Never "])
def test_off_and_never_mean_keep_forever(spelling: str) -> None:
    assert Duration().parse(spelling) is None


@pytest.mark.parametrize("spelling", ["0", "0s", "0h", "0.0"])
def test_zero_is_refused_as_ambiguous_with_a_pointer_to_off(spelling: str) -> None:
    with pytest.raises(ValueError, match="'off'"):
        Duration().parse(spelling)


def test_a_duration_is_read_in_seconds() -> None:
    assert Duration().parse("1h30m") == 5400.0


@pytest.mark.parametrize("spelling", ["off", "never"])
def test_clean_max_age_off_or_never_deletes_nothing(tmp_path: Path, spelling: str) -> None:
    rec = ensure_private_dir(tmp_path / "rec")
    old = _old_original(rec)
    done = CliRunner().invoke(main, ["clean", str(rec), "--max-age", spelling])
    assert done.exit_code == 0, done.output
    assert old.exists()
    assert "deleted 0 file(s)" in done.output


def test_clean_max_age_off_still_applies_max_bytes(tmp_path: Path) -> None:
    rec = ensure_private_dir(tmp_path / "rec")
    old = _old_original(rec)
    done = CliRunner().invoke(main, ["clean", str(rec), "--max-age", "off", "--max-bytes", "0"])
    assert done.exit_code == 0, done.output
    assert not old.exists()


@pytest.mark.parametrize("spelling", ["0", "0s"])
def test_clean_max_age_zero_is_a_usage_error_and_deletes_nothing(tmp_path: Path, spelling: str) -> None:
    rec = ensure_private_dir(tmp_path / "rec")
    old = _old_original(rec)
    done = CliRunner().invoke(main, ["clean", str(rec), "--max-age", spelling])
    assert done.exit_code == 2
    assert "off" in done.output and "--max-age" in done.output
    assert old.exists()


def test_clean_max_age_one_day_deletes_an_older_original(tmp_path: Path) -> None:
    rec = ensure_private_dir(tmp_path / "rec")
    old = _old_original(rec)
    done = CliRunner().invoke(main, ["clean", str(rec), "--max-age", "1d"])
    assert done.exit_code == 0 and not old.exists()


@pytest.mark.parametrize("flag", ["--retention", "--cache-ttl"])
def test_wrap_refuses_zero_for_a_keep_flag(flag: str) -> None:
    done = CliRunner().invoke(main, ["wrap", flag, "0", "--", "true"])
    assert done.exit_code == 2
    assert flag in done.output and "off" in done.output


def test_wrap_reads_off_as_keep_forever_for_retention_and_the_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    import mcpsqueeze.proxy

    seen = []

    async def fake_run_wrap(settings: object, ends: object, until: object, spawned: Any) -> int:
        seen.append(settings)
        return 0

    monkeypatch.setattr(mcpsqueeze.proxy, "run_wrap", fake_run_wrap)
    url = "http://127.0.0.1:9/mcp"  # a URL backend: nothing is spawned, nothing is reached (run_wrap is replaced)
    done = CliRunner().invoke(main, ["wrap", "--retention", "off", "--cache-ttl", "never", "--", url])
    assert done.exit_code == 0, done.output
    [settings] = seen
    assert settings.retention is None  # type: ignore[attr-defined]
    assert settings.cache_ttl is None  # type: ignore[attr-defined]  # no TTL: entries and bytes bound it
