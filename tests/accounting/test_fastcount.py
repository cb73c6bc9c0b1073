"""fastokens, the counter for huge texts, agrees with tiktoken exactly, and tiktoken takes over when it
fails or is missing."""

from __future__ import annotations

import difflib
import random
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcpsqueeze.accounting import _counter, _tokens
from mcpsqueeze.accounting._tokens import count_tokens, encoding, load_fastokens
from mcpsqueeze.demo.bulk import blob


def _whole(text: str) -> int:
    """tiktoken on the text in one piece: what fastokens must agree with."""
    return len(encoding().encode_ordinary(text))


ROOT = Path(__file__).resolve().parents[2]


_FAST: list[Callable[[str], int]] = []


def _fast() -> Callable[[str], int]:
    """fastokens' counter, loaded once for the module (~2 s)."""
    pytest.importorskip("fastokens")
    if not _FAST:
        _FAST.append(load_fastokens())
    return _FAST[0]


def _patches(sources: list[Path]) -> Iterator[str]:
    """Unified diffs of source files against a copy with every fifth line changed."""
    for path in sources[:15]:
        old = path.read_text(encoding="utf-8").splitlines(keepends=True)
        new = [line.upper() if i % 5 == 0 else line for i, line in enumerate(old)]
        yield from difflib.unified_diff(old, new, f"a/{path.name}", f"b/{path.name}")


def _corpus() -> list[str]:
    """Texts of the kinds agents see, and the corners of o200k's pre-tokenisation."""
    rng = random.Random(11)
    texts = [blob(300_000, 1)]
    sources = sorted((ROOT / "src" / "mcpsqueeze").rglob("*.py"))[:40]
    texts += [p.read_text(encoding="utf-8") for p in sources]
    texts += [p.read_text(encoding="utf-8") for p in sorted((ROOT / "docs").glob("*.md"))]
    texts.append("".join(_patches(sources)))  # what `git log -p` shows an agent
    texts.append("\r\n".join(f'{i},"Name {i}, Jr.",{rng.random() * 1e6:.4f},YES' for i in range(3000)))
    texts.append(
        "\n".join(
            f"2026-12-01 13:{i % 60:02d}:07,{i % 1000:03d} ERROR [w-{i % 8}] took {i}ms" for i in range(3000)
        )
    )
    texts += [
        "日本語のテキストです。中文文本，包括标点符号。한국어 텍스트입니다. " * 300,
        "👩‍👩‍👧‍👦 🏳️‍🌈 👍🏽 🧠🔥✨ ❤️ 🇩🇪🇫🇷 1️⃣ " * 300,
        "e\u0301 a\u0308\u0323 Z\u0335\u0321a\u0337\u031blgo n\u0303o ﷺ " * 300,
        "مرحبا بالعالم! שלום עולם. \u202eRTL\u202c \u200fmark\u200f " * 300,
        "".join(" " * rng.randint(1, 2000) + rng.choice("x\n\t\u3000\xa0") for _ in range(300)),
        " " * 200_000 + "a" + "\n" * 100_000 + "\t" * 50_000 + "end",
        "".join(str(rng.getrandbits(rng.randint(1, 300))) + rng.choice(" .,\n") for _ in range(2000)),
        "IT'S HE'LL WE'VE THEY'RE I'M SHE'D it's We'Ve tHEY'rE 'S 's ''s X'S'S ÉCOLE'S Ñ'LL " * 300,
        "line\r\n\r\n\r\n  indented\r\n\ttab\r\n\r" * 500,
        "<|endoftext|> hello <|endofprompt|><|fim_prefix|><|im_start|>user<|im_end|>" * 300,
        "a" * 100_000 + "B" * 100_000 + "ÄÖÜäöüß" * 10_000,
        "".join(chr(rng.randrange(0, 32)) for _ in range(20_000)),
        "".join(chr(c) for c in (0xFFFE, 0xFFFF, 0x10FFFF, 0xE000, 0xFDD0, 0x0085, 0x2028, 0x2029)) * 500,
    ]
    pools = [(0x20, 0x7F), (0xA0, 0x3000), (0x3000, 0xA000), (0x1F300, 0x1FA00), (0x10000, 0x20000)]
    for _ in range(200):
        lo, hi = pools[rng.randrange(len(pools))]
        texts.append("".join(chr(rng.randrange(lo, hi)) for _ in range(rng.randint(1, 2000))))
    return texts


def test_fastokens_counts_a_varied_corpus_exactly_as_tiktoken() -> None:
    fast = _fast()
    mismatches = [(t[:80], fast(t), _whole(t)) for t in _corpus() if fast(t) != _whole(t)]
    assert not mismatches


_EDGES = [
    *"aAzZ'sStTlLdD \n\r\t\u3000\xa0019.,:;/\\-_\"{}[]<>|é\u0301中👍\u200d",
    "'s",
    "'LL",
    "\r\n",
    "<|endoftext|>",
]


@settings(max_examples=400, deadline=None)
@given(
    st.text(st.characters(codec="utf-8"), max_size=300)
    | st.lists(st.sampled_from(_EDGES), max_size=200).map("".join)
)
def test_fastokens_counts_generated_text_exactly_as_tiktoken(text: str) -> None:
    assert _fast()(text) == _whole(text)


def _counted(texts: list[str]) -> list[int]:
    """What a counter with the `fastokens` setting on counts for `texts`."""
    counter = _counter.TokenCounter(fastokens=True)
    try:
        futures = [counter.count(text) for text in texts]
        return [future.result(timeout=120) for future in futures]
    finally:
        counter.close()


def test_the_counter_counts_big_texts_with_fastokens_exactly_when_asked(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    fast = _fast()
    counted: list[int] = []

    def counting(text: str) -> int:
        counted.append(len(text))
        return fast(text)

    monkeypatch.setattr(_counter, "_FAST_ABOVE", 1 << 20)
    monkeypatch.setattr(_tokens, "load_fastokens", lambda: counting)
    texts = [blob(3_000_000, 2), blob(2_500_000, 3) + " lone \ud800 surrogate, " + blob(200_000, 4), "small"]
    assert _counted(texts) == [count_tokens(t) for t in texts]
    assert sum(counted) > 3_000_000  # fastokens counted the big texts' spans


def test_without_being_asked_the_counter_never_loads_fastokens(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_counter, "_FAST_ABOVE", 1 << 20)
    monkeypatch.setattr(_tokens, "load_fastokens", lambda: pytest.fail("fastokens was loaded"))
    text = blob(1_500_000, 5)
    counter = _counter.TokenCounter()
    try:
        assert counter.count(text).result(timeout=120) == count_tokens(text)
    finally:
        counter.close()


def test_tiktoken_counts_when_fastokens_fails_to_load(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_counter, "_FAST_ABOVE", 1 << 20)
    monkeypatch.setattr(_tokens, "load_fastokens", lambda: (_ for _ in ()).throw(OSError("no tables")))
    texts = [blob(1_500_000, 6), blob(1_200_000, 7)]
    assert _counted(texts) == [count_tokens(t) for t in texts]


def test_a_span_fastokens_cannot_count_goes_to_tiktoken(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = [0]

    def flaky(part: str) -> int:
        calls[0] += 1
        if calls[0] % 2:
            raise ValueError("cannot count this one")
        return count_tokens(part)

    monkeypatch.setattr(_counter, "_FAST_ABOVE", 1 << 20)
    monkeypatch.setattr(_tokens, "load_fastokens", lambda: flaky)
    text = blob(2_000_000, 5)
    assert _counted([text]) == [count_tokens(text)]
    assert calls[0] > 10


def test_fastokens_is_let_go_of_once_no_huge_text_came_for_a_while(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_counter, "_FAST_ABOVE", 1 << 20)
    monkeypatch.setattr(_counter, "_KEEP", 2.0)
    monkeypatch.setattr(_tokens, "load_fastokens", lambda: count_tokens)
    counter = _counter.TokenCounter(fastokens=True)
    try:
        text = blob(1_200_000, 8)
        assert counter.count(text).result(timeout=120) == count_tokens(text)
        assert counter._fast is not None
        deadline = time.monotonic() + 10
        while counter._fast is not None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert counter._fast is None
        assert counter.count("small, after it").result(timeout=60) == count_tokens("small, after it")
    finally:
        counter.close()
