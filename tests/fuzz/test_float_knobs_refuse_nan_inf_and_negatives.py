"""nan, inf and negative numbers are refused for every float knob (flags, the config
file's `[defaults]`, the library API), exit 2 with a message naming the knob; never accepted to fail later."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from mcpsqueeze import UsageError
from memwrap import Completed, run_cli
from rawclient import empty_config

EMPTY = empty_config()  # (a config file must be a regular file only its owner writes)

BAD = ("nan", "inf", "-inf", "-1", "0")


def _run(*args: str) -> Completed:
    return run_cli(*args, stdin="")


@pytest.mark.parametrize("value", BAD)
def test_timeout_flag_refuses_nan_inf_and_negative(value: str) -> None:
    for command in ("config", "serve"):
        done = _run(command, "--config", str(EMPTY), f"--timeout={value}", "--", sys.executable, "-c", "")
        assert done.returncode == 2, (command, done.stdout, done.stderr)
        assert "--timeout" in done.stderr and "Traceback" not in done.stderr


def test_wrap_timeout_nan_exits_2_before_starting(tmp_path: Path) -> None:
    done = _run("wrap", "--timeout", "nan", "--", sys.executable, "-c", "import time; time.sleep(30)")
    assert done.returncode == 2, done.stderr
    assert "--timeout" in done.stderr and "finite" in done.stderr


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("timeout", "nan"),
        ("timeout", "inf"),
        ("timeout", "-2.5"),
        ("cache_ttl", "nan"),
        ("retention", "inf"),
        ("cache_ttl", "-1.0"),
    ],
)
def test_config_file_refuses_nan_inf_and_negative(tmp_path: Path, key: str, value: str) -> None:
    path = tmp_path / "c.toml"
    path.write_text(f"[defaults]\n{key} = {value}\n", encoding="utf-8")
    done = _run("wrap", "--config", str(path), "--", sys.executable, "-c", "import time; time.sleep(30)")
    assert done.returncode == 2, done.stderr
    assert f"{path}:2" in done.stderr and key in done.stderr and "Traceback" not in done.stderr


def test_huge_durations_are_refused_with_the_bound() -> None:
    done = _run("config", "--config", str(EMPTY), "--cache-ttl", "99999999999999999999d")
    assert done.returncode == 2 and "at most" in done.stderr, done.stderr


@pytest.mark.parametrize("value", [float("nan"), float("inf"), -1.0, 0.0])
def test_client_timeout_refuses_bad_numbers(value: float) -> None:
    from mcpsqueeze import Client

    with pytest.raises(UsageError, match="timeout"):
        Client({"x": {"command": sys.executable, "args": ["-c", ""]}}, config=False, timeout=value)
