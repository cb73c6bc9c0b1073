"""Leaving the proxy: it exits soon after the agent closes stdin, with a summary that counts every call."""

from __future__ import annotations

import sys
import time

from mcpsqueeze.accounting._tokens import count_tokens
from mcpsqueeze.demo.bulk import blob
from rawclient import RawClient, cli, text

BULK = [sys.executable, "-m", "mcpsqueeze.demo.bulk"]
DEADLINE = 60.0  # generous: this is not a speed test, it catches exits that wait on a stuck counter


def _summary_value(stderr: str, label: str) -> int:
    line = next(line for line in stderr.splitlines() if line.strip().startswith(label))
    return int(line.split()[len(label.split())])


def test_the_proxy_exits_promptly_after_a_large_result_with_an_exact_summary() -> None:
    size = 6_000_000
    with RawClient(cli("wrap", "--recovery", "memory", "--", *BULK)) as client:
        client.initialize()
        small = client.call("blob", {"size": 300, "seed": 1})
        large = client.call("blob", {"size": size, "seed": 2}, timeout=DEADLINE)
        assert len(text(large)) < size  # shrunk
        started = time.monotonic()
        assert client.close(timeout=DEADLINE) == 0
        assert time.monotonic() - started < DEADLINE
        stderr = client.stderr
    assert "partial" not in stderr
    assert _summary_value(stderr, "calls proxied") == 2
    expected_before = count_tokens(text(small)) + count_tokens(blob(size, 2))
    assert _summary_value(stderr, "tokens before") == expected_before
    assert _summary_value(stderr, "tokens after") == count_tokens(text(small)) + count_tokens(text(large))


def _running(marker: str) -> bool:
    from pathlib import Path

    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            try:
                if (proc / "cmdline").read_bytes().replace(b"\0", b" ").strip() == marker.encode():
                    return True
            except OSError:
                continue
    return False


def test_a_backend_started_early_does_not_outlive_a_usage_error() -> None:
    import subprocess

    marker = "sleep 61.2345"  # wrap starts the backend before it checks its own options
    done = subprocess.run(
        cli("wrap", "--cache-ttl", "bogus", "--", *marker.split()), capture_output=True, timeout=DEADLINE
    )
    assert done.returncode == 2, done.stderr
    assert not _running(marker)
