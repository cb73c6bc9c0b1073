from __future__ import annotations

import pytest

from mcpsqueeze._errors import UsageError
from mcpsqueeze.recovery import parse_duration, parse_size


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("24h", 86400.0),
        ("90m", 5400.0),
        ("30s", 30.0),
        ("7d", 604800.0),
        ("2w", 1209600.0),
        ("1h30m", 5400.0),
        ("1d12h", 129600.0),
        ("1.5h", 5400.0),
        ("3600", 3600.0),
        ("0", 0.0),
        (" 24H ", 86400.0),
    ],
)
def test_durations_are_read_as_seconds(text: str, seconds: float) -> None:
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["", "h", "24x", "-1h", "1h1h", "1ms", "24 h", "inf", "nan", "1e3", "1h-"])
def test_a_garbled_duration_is_a_usage_error_with_examples(text: str) -> None:
    with pytest.raises(UsageError, match="24h"):
        parse_duration(text)


@pytest.mark.parametrize(
    ("text", "size"),
    [
        ("1G", 1024**3),
        ("512M", 512 * 1024**2),
        ("10k", 10240),
        ("10K", 10240),
        ("1GiB", 1024**3),
        ("1GB", 1000**3),
        ("1.5M", 1572864),
        ("100", 100),
        ("100B", 100),
        ("2 TiB", 2 * 1024**4),
    ],
)
def test_sizes_are_read_as_bytes(text: str, size: int) -> None:
    assert parse_size(text) == size


@pytest.mark.parametrize("text", ["", "G", "1X", "-1G", "1GiBs", "one", "1e9"])
def test_a_garbled_size_is_a_usage_error_with_examples(text: str) -> None:
    with pytest.raises(UsageError, match="512M"):
        parse_size(text)
