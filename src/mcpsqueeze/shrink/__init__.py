"""The pure condense engine: text blocks and a character budget in, a preview that fits out.

No I/O, logging, asyncio or environment here: the proxy stores the original and attaches the
truncation record; this package only decides what to show and renders what the model reads.
"""

from __future__ import annotations

from mcpsqueeze._jsonbytes import NOT_JSON, parse_kept, parse_strict
from mcpsqueeze.shrink._engine import Shrunk, shrink_texts
from mcpsqueeze.shrink._notice import (
    RecoveryHint,
    Report,
    render_call,
    render_message,
    render_notice,
    render_text_marker,
)
from mcpsqueeze.shrink._outline import landmarks
from mcpsqueeze.shrink._rank import query_terms, rank_lines, search_terms

__all__ = [
    "NOT_JSON",
    "RecoveryHint",
    "Report",
    "Shrunk",
    "landmarks",
    "parse_kept",
    "parse_strict",
    "query_terms",
    "rank_lines",
    "render_call",
    "render_message",
    "render_notice",
    "render_text_marker",
    "search_terms",
    "shrink_texts",
]
