"""One log line per shrunk or deduplicated call, and per recovery (`--log-level info`), on stderr.

Written after the tokens are counted (off the response path), so the line carries both sizes.
"""

from __future__ import annotations

import logging

from ._stats import CallRecord

__all__ = ["CallLog"]

log = logging.getLogger("mcpsqueeze.calls")

_VERBS = {"shrink": "shrunk", "dedup": "deduplicated"}


class CallLog:
    """A `CallObserver` that logs at INFO; silent (and nearly free) at the default WARNING level."""

    def on_call(self, record: CallRecord, tokens_before: int, tokens_after: int) -> None:
        verb = _VERBS.get(record.action)
        if verb is None or not log.isEnabledFor(logging.INFO):
            return
        log.info(
            "%s %s call #%d (session %s): %d -> %d chars, %d -> %d tokens; response %s",
            verb,
            record.tool,
            record.number,
            record.session or "-",
            record.chars_before,
            record.chars_after,
            tokens_before,
            tokens_after,
            record.response_id or "-",
        )

    def on_recover(self, response_id: str, size: int) -> None:
        log.info("recovered response %s (original of %d bytes)", response_id, size)
