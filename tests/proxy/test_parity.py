"""Every backend answers the same directly and through `wrap`, but for the documented recover tool."""

from __future__ import annotations

from pathlib import Path

import pytest
from parity import CASES, ParityCase, assert_parity, run_parity


@pytest.fixture(params=CASES, ids=[case.name for case in CASES])
def parity_case(request: pytest.FixtureRequest) -> tuple[ParityCase, list[str]]:
    case: ParityCase = request.param
    argv = case.argv()
    if argv is None:
        pytest.skip(f"the {case.name} server is not installed here (scripts/install-test-deps.sh)")
    return case, argv


def test_a_small_exchange_is_identical_directly_and_through_wrap(
    parity_case: tuple[ParityCase, list[str]], tmp_path: Path
) -> None:
    case, argv = parity_case
    code, stderr = run_parity(case, argv, tmp_path / "rec")
    assert code == 0, stderr
    assert "mcpsqueeze session summary:" in stderr


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
