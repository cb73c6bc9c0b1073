"""Prometheus metrics for `serve`'s API and `wrap`'s HTTP frontend (`GET /metrics`), one registry per proxy.
Labels are server and tool names only, capped in length and count (a client names the tool).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any

from ._stats import CallRecord

__all__ = ["Metrics", "metrics_endpoint"]

MAX_LABEL_CHARS = 64
MAX_TOOLS = 256  # distinct (server, tool) pairs; later ones are counted under tool="other"
MAX_ORIGINS = 4096  # response ids remembered to label recoveries with their tool

_LATENCY_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 10.0)


class Metrics:
    """A `CallObserver` that keeps Prometheus counters and histograms of one proxy process."""

    def __init__(self) -> None:
        from prometheus_client import CollectorRegistry, Counter, Histogram

        self.registry = CollectorRegistry()
        labels = ("server", "tool")

        def counter(name: str, doc: str, extra: tuple[str, ...] = ()) -> Any:
            return Counter(name, doc, (*labels, *extra), registry=self.registry)

        def histogram(name: str, doc: str) -> Any:
            return Histogram(name, doc, labels, buckets=_LATENCY_BUCKETS, registry=self.registry)

        self.calls = counter("mcpsqueeze_calls", "Tool calls answered through the proxy.", ("action",))
        self.shrunk = counter("mcpsqueeze_shrunk", "Results shrunk to the budget.")
        self.deduplicated = counter("mcpsqueeze_deduplicated", "Results replaced by a pointer to an earlier.")
        self.recovered = counter("mcpsqueeze_recovered", "Originals read back (squeeze_recover, API).")
        self.store_failures = counter(
            "mcpsqueeze_store_failures", "Results left unshrunk because the original could not be stored."
        )
        self.tokens_before = counter(
            "mcpsqueeze_tokens_before",
            "o200k tokens of what the client's model would read of the backend's result "
            "(mcpsqueeze_views says which part).",
        )
        self.tokens_after = counter(
            "mcpsqueeze_tokens_after", "o200k tokens of what the client's model reads of the result it got."
        )
        self.views = counter(
            "mcpsqueeze_views",
            "Calls by the client profile whose model's view was counted (none: the text blocks) and the part "
            "of the original it reads (text, structuredContent, both).",
            ("client", "seen"),
        )
        self.added_latency = histogram(
            "mcpsqueeze_added_latency_seconds",
            "Time the result stages (dedup, shrink, store) added to a call.",
        )
        self.call_latency = histogram(
            "mcpsqueeze_call_latency_seconds",
            "Time from the tool call's request to its presented result, the backend's time included.",
        )
        self._lock = threading.Lock()
        self._tools: set[tuple[str, str]] = set()
        self._origins: OrderedDict[str, tuple[str, str]] = OrderedDict()

    def _labels(self, server: str, tool: str) -> tuple[str, str]:
        key = (server[:MAX_LABEL_CHARS], tool[:MAX_LABEL_CHARS])
        with self._lock:
            if key in self._tools:
                return key
            if len(self._tools) >= MAX_TOOLS:
                return (key[0], "other")
            self._tools.add(key)
            return key

    def on_call(self, record: CallRecord, tokens_before: int, tokens_after: int) -> None:
        server, tool = self._labels(record.server, record.tool)
        self.calls.labels(server, tool, record.action).inc()
        if record.action == "shrink":
            self.shrunk.labels(server, tool).inc()
        elif record.action == "dedup":
            self.deduplicated.labels(server, tool).inc()
        if record.store_failed:
            self.store_failures.labels(server, tool).inc()
        self.tokens_before.labels(server, tool).inc(tokens_before)
        self.tokens_after.labels(server, tool).inc(tokens_after)
        self.views.labels(server, tool, record.client or "none", record.seen).inc()
        self.added_latency.labels(server, tool).observe(record.added_latency_ms / 1000.0)
        self.call_latency.labels(server, tool).observe(record.call_latency_ms / 1000.0)
        if record.response_id:
            with self._lock:
                self._origins[record.response_id] = (server, tool)
                while len(self._origins) > MAX_ORIGINS:
                    self._origins.popitem(last=False)

    def on_recover(self, response_id: str, size: int) -> None:
        with self._lock:
            server, tool = self._origins.get(response_id, ("", ""))
        self.recovered.labels(server, tool).inc()

    def render(self) -> tuple[bytes, str]:
        """The exposition text and its content type."""
        from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

        return generate_latest(self.registry), CONTENT_TYPE_LATEST


def metrics_endpoint(metrics: Metrics, check_host: bool = False) -> Any:
    """A Starlette endpoint for GET /metrics. `check_host`: refuse non-loopback Host headers (DNS rebinding),
    as the MCP endpoint beside it does; a bearer token, when the server has one, is checked in front of it.
    """
    from starlette.requests import Request
    from starlette.responses import PlainTextResponse, Response

    from .._net import is_loopback

    async def endpoint(request: Request) -> Response:
        host = request.headers.get("host", "")
        if check_host and not is_loopback(host.rsplit(":", 1)[0] if not host.endswith("]") else host):
            return PlainTextResponse("Invalid Host header\n", status_code=421)
        body, content_type = metrics.render()
        return Response(body, media_type=content_type)

    return endpoint
