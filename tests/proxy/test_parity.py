"""Every backend answers the same directly and through `wrap`, but for the documented recover tool: the
demo server here, over each of wrap's transports in this process (the public servers' cases spawn them:
test_public_servers.py)."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path

import pytest
from parity import CASES, assert_parity, exchange

from memwrap import MemoryServer
from rawclient import RawClient

DEMO = next(case for case in CASES if case.name == "demo")


def test_a_small_exchange_is_identical_directly_and_through_wrap(
    tmp_path: Path, wrap_door: Callable[..., AbstractContextManager[RawClient]]
) -> None:
    with MemoryServer() as direct:
        expected = exchange(direct, DEMO)
    with wrap_door(["--recovery-dir", str(tmp_path / "rec")]) as proxied:
        got = exchange(proxied, DEMO)
    assert_parity(expected, got)


def test_the_parity_check_can_fail_on_any_other_difference() -> None:
    direct = {"tools/list": {"result": {"tools": [{"name": "a"}]}}, "call": {"result": {"content": []}}}
    proxied = {
        "tools/list": {"result": {"tools": [{"name": "a"}, {"name": "squeeze_recover"}]}},
        "call": {"result": {"content": [], "_meta": {}}},
    }
    with pytest.raises(AssertionError):
        assert_parity(direct, proxied)
    with pytest.raises(AssertionError):  # a missing recover tool is a difference too
        assert_parity(direct, {**direct})
    proxied["call"] = direct["call"]
    assert_parity(direct, proxied)
