"""Accounting, off the response path: token counting (a background thread), per-call records, the session
summary, the stats file and its report, the call log and Prometheus metrics.
"""

from __future__ import annotations

from ._calllog import CallLog
from ._metrics import Metrics, metrics_endpoint
from ._report import load_report, render_json, render_text, write_html
from ._stats import Accountant, CallObserver, CallRecord, new_session_id, print_summary

__all__ = [
    "Accountant",
    "CallLog",
    "CallObserver",
    "CallRecord",
    "Metrics",
    "load_report",
    "metrics_endpoint",
    "new_session_id",
    "print_summary",
    "render_json",
    "render_text",
    "write_html",
]
