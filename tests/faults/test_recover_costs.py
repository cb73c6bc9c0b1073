"""What one recovery may cost, whatever it asks (docs/limits.md): grep and search of a JSON original
whose long keys nest deep (its pointers add up to hundreds of MB) hold at most three times the original;
one page of "lines": "1-" x 50 on an 8 MB original costs about one page (under 50 MB), whichever page; the
same parts unpaged are refused, naming `page`. Measured with tracemalloc around `core.recover`, the one
answer every door gives, and as a spawned wrap's own peak RSS; the doors are in the fuzz suite."""

from __future__ import annotations

import json
import sys
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from mcpsqueeze import Squeezer, UsageError
from mcpsqueeze.core import RecoverRequest, recover
from mcpsqueeze.core._search import SearchLimits, grep
from rawclient import RawClient, cli, demo_server

sys.path.insert(0, str(Path(__file__).parents[1] / "fuzz"))
from hostile_inputs import long_keys_nested_deep

RID = "0" * 32


class _Held:
    """A store holding one original's record in memory, as wrap's memory cache does (idle memory)."""

    def __init__(self, text: str) -> None:
        self.data = json.dumps({"content": [{"type": "text", "text": text}]}).encode()

    def get(self, response_id: str) -> bytes:
        return self.data


def _peak(run: Callable[[], Any]) -> tuple[Any, int, float]:
    """What `run` returns, the most memory it held at once above where it started, and its seconds."""
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        started = time.perf_counter()
        out = run()
        seconds = time.perf_counter() - started
        return out, tracemalloc.get_traced_memory()[1] - base, seconds
    finally:
        tracemalloc.stop()


def _recover(store: _Held, arguments: dict[str, Any], page_size: int | None = None) -> dict[str, Any]:
    return recover(store, RecoverRequest.parse({"response_id": RID, **arguments}), page_size)


@pytest.mark.parametrize("ask", [{"grep": "word 1"}, {"search": "word"}, {"grep": "bottom"}])
def test_grep_and_search_of_long_keys_nested_deep_hold_at_most_three_times_the_original(
    ask: dict[str, Any],
) -> None:
    text = long_keys_nested_deep()
    store = _Held(text)
    _recover(_Held(long_keys_nested_deep(3, 10)), ask)  # imports and first-use tables are not the search's
    answer, peak, _ = _peak(lambda: _recover(store, ask))
    assert peak <= 3 * len(text), f"{peak:,} bytes for a {len(text):,}-character original"
    lines = answer["content"][0]["text"].splitlines()
    assert "values match" in lines[0] and len(lines) > 1
    assert all(len(line) < 1000 for line in lines)  # pointers are shown cut, as before


def test_a_search_past_its_bound_is_refused_before_its_values_are_built() -> None:
    many = list(range(1_000_000))
    limits = SearchLimits(max_bytes=1 << 20)

    def refused() -> str:
        with pytest.raises(UsageError) as refusal:
            grep(many, "7", limits=limits)
        return str(refusal.value)

    message, peak, _ = _peak(refused)
    assert "search a part of it" in message
    assert peak < 4 << 20  # about the bound, not the million values' structures


EIGHT_MB = "".join(f"line {n:07d} " + "abcdefgh" * 9 + "\n" for n in range(100_000))
FIFTY = ",".join(["1-"] * 50)


@pytest.mark.parametrize("page", [0, 1, 5375, 10_749])
def test_a_page_of_fifty_whole_copies_of_an_8_mb_original_costs_about_one_page(page: int) -> None:
    store = _Held(EIGHT_MB)
    _recover(store, {"lines": "1-2,3"}, 40_000)  # warm
    answer, peak, _ = _peak(lambda: _recover(store, {"lines": FIFTY, "page": page}, 40_000))
    place = answer["_meta"]["mcpsqueeze/page"]
    assert place["pages"] == 10_750 and place["offset"] == page * 40_000
    start = place["offset"] % len(EIGHT_MB)
    assert answer["content"][0]["text"] == (EIGHT_MB * 2)[start : start + place["length"]]
    assert len(place["parts"]) == 50 and place["parts"][49]["end"] == 50 * len(EIGHT_MB)
    # Not the 50 parts rendered (400 MB and more); its time is measured by `python -m scripts.bench recover`.
    assert peak < 50 << 20, f"{peak:,} bytes"


def test_the_same_parts_unpaged_are_refused_naming_page() -> None:
    squeezer = Squeezer(budget=2000)
    import anyio

    presented = anyio.run(squeezer.present, "s", "t", {}, {"content": [{"type": "text", "text": EIGHT_MB}]})
    rid = presented["_meta"]["truncation"]["response_id"]
    with pytest.raises(UsageError, match='"page": 0'):
        squeezer.recover(rid, lines=FIFTY)
    assert (
        squeezer.recover(rid, lines="2-3")
        == EIGHT_MB.splitlines(keepends=True)[1] + EIGHT_MB.splitlines(keepends=True)[2]
    )
    squeezer.close()


def _status(pid: int, field: str) -> int:
    """A /proc/PID/status figure in bytes (VmRSS: resident now; VmHWM: its peak since reset)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) * 1024
    raise AssertionError(f"no {field} for {pid}")


def test_wrap_greps_and_searches_a_deep_long_keyed_original_within_three_times_its_size(
    tmp_path: Path,
) -> None:
    """The spawned wrap's own resident memory: its peak (VmHWM, reset through clear_refs just before)
    above what it held just before, per request, after a warm-up of the same requests on a small one."""
    original = long_keys_nested_deep()
    asks = [{"grep": "word 1"}, {"search": "word"}]
    argv = cli("wrap", "--recovery-dir", str(tmp_path / "rec"), "--budget", "2000", "--", *demo_server())
    peaks = {}
    with RawClient(argv) as client:
        client.initialize()
        small = client.call("echo", {"text": long_keys_nested_deep(40, 100)})["_meta"]["truncation"]
        for ask in asks:
            client.call("squeeze_recover", {"response_id": small["response_id"], **ask})
        rid = client.call("echo", {"text": original}, timeout=60)["_meta"]["truncation"]["response_id"]
        pid = client.proc.pid
        for ask in asks:
            Path(f"/proc/{pid}/clear_refs").write_text("5")  # VmHWM := VmRSS
            idle = _status(pid, "VmRSS")
            answer = client.call("squeeze_recover", {"response_id": rid, **ask}, timeout=60)
            peaks[json.dumps(ask)] = _status(pid, "VmHWM") - idle
            assert "values match" in answer["content"][0]["text"]
        assert client.close() == 0
    assert all(peak <= 3 * len(original) for peak in peaks.values()), (len(original), peaks)
