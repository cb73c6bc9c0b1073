"""Accounting, off the response path: token counting (a helper process), per-call records, the session
summary, the stats file and its report, the call log and Prometheus metrics.

A lazy face: the counting helper runs as `python -m mcpsqueeze.accounting._counter`, which imports this
package first and must not load itself (or anything else) through it.
"""

from __future__ import annotations

from .._lazy import LazyFace

TYPE_CHECKING = False  # not `typing.TYPE_CHECKING`: importing typing is not free at start-up
if TYPE_CHECKING:
    from ._calllog import CallLog
    from ._metrics import Metrics, metrics_endpoint
    from ._report import load_report, render_json, render_text, summarise_stats_file, write_html
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
    "summarise_stats_file",
    "write_html",
]

_MODULES = {
    "Accountant": "_stats",
    "CallLog": "_calllog",
    "CallObserver": "_stats",
    "CallRecord": "_stats",
    "Metrics": "_metrics",
    "load_report": "_report",
    "metrics_endpoint": "_metrics",
    "new_session_id": "_stats",
    "print_summary": "_stats",
    "render_json": "_report",
    "render_text": "_report",
    "summarise_stats_file": "_report",
    "write_html": "_report",
}


__getattr__ = LazyFace(__name__, _MODULES, globals())
