"""Prometheus metrics of the center, served at `/metrics`.

Each app has its own registry (tests and benches run several centers in one process).
Turn metrics are read from the trace the engine writes, so they count exactly what the
console shows; request metrics come from an ASGI middleware.
"""

from __future__ import annotations

import time
from typing import Any

from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Counter, Histogram
from prometheus_client.exposition import generate_latest
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from jarvis.center.store import TurnWrite

__all__ = ["CONTENT_TYPE_LATEST", "CenterMetrics", "RequestMetrics"]

# Seconds; a turn spans sub-millisecond scripted replies to tens of seconds of a CPU LLM.
_BUCKETS = (0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120)


_METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})


class CenterMetrics:
    """The center's metrics in their own registry."""

    def __init__(self, backend_name: str) -> None:
        self.registry = CollectorRegistry()
        self.backend = backend_name
        r = self.registry
        self.turns = Counter("jarvis_turns", "Requests handled by the engine",
                             ["endpoint", "stop_reason"], registry=r)
        self.turn_seconds = Histogram("jarvis_turn_duration_seconds", "Engine time per turn",
                                      ["endpoint"], buckets=_BUCKETS, registry=r)
        self.stage_seconds = Histogram("jarvis_stage_duration_seconds",
                                       "Time per stage of a turn", ["stage"],
                                       buckets=_BUCKETS, registry=r)
        self.llm_seconds = Histogram("jarvis_llm_call_duration_seconds", "One LLM completion",
                                     ["backend"], buckets=_BUCKETS, registry=r)
        self.llm_tokens = Counter("jarvis_llm_tokens", "Tokens the LLM read or wrote",
                                  ["backend", "kind"], registry=r)
        self.retries = Counter("jarvis_validation_retries",
                               "LLM retries after invalid calls (center) or node validation errors",
                               ["source"], registry=r)
        self.validation_failures = Counter(
            "jarvis_validation_failures",
            "Invalid parameters found in tool calls (center) or reported by the node",
            ["source"], registry=r)
        self.errors = Counter("jarvis_errors", "Failures by kind", ["kind"], registry=r)
        self.requests = Counter("jarvis_http_requests", "HTTP requests",
                                ["method", "route", "status"], registry=r)
        self.request_seconds = Histogram("jarvis_http_request_duration_seconds",
                                         "HTTP request latency", ["method", "route"],
                                         buckets=_BUCKETS, registry=r)

    def observe_turn(self, write: TurnWrite) -> None:
        """Count one committed turn from its trace."""
        trace = write.trace
        self.turns.labels(write.endpoint, write.stop_reason or "none").inc()
        self.turn_seconds.labels(write.endpoint).observe(write.duration_ms / 1000)
        for stage, ms in trace.get("stages_ms", {}).items():
            self.stage_seconds.labels(stage).observe(float(ms) / 1000)
        for call in trace.get("llm_calls", []):
            self._observe_llm_call(call)
        for retry in trace.get("retries", []):
            source = str(retry.get("source", "center"))
            self.retries.labels(source).inc()
            if source == "center":
                self.validation_failures.labels("center").inc(len(retry.get("problems", [])))
        node_failures = sum(1 for r in trace.get("tool_results", []) if r.get("validation_error"))
        if node_failures:
            self.validation_failures.labels("node").inc(node_failures)
        if write.stop_reason == "error":
            self.errors.labels(_error_kind(trace)).inc()

    def _observe_llm_call(self, call: dict[str, Any]) -> None:
        if "ms" in call:
            self.llm_seconds.labels(self.backend).observe(float(call["ms"]) / 1000)
        usage = call.get("usage") or {}
        for kind in ("prompt", "completion"):
            value = usage.get(f"{kind}_tokens")
            if isinstance(value, int) and value > 0:
                self.llm_tokens.labels(self.backend, kind).inc(value)

    def render(self) -> bytes:
        return generate_latest(self.registry)


def _error_kind(trace: dict[str, Any]) -> str:
    """`LLMTimeoutError` and its kin for LLM failures; `unresolved` when the engine gave up."""
    failed = [c["error"] for c in trace.get("llm_calls", []) if c.get("error")]
    if failed:
        return str(failed[-1]).split(":", 1)[0]
    return "unresolved"


class RequestMetrics:
    """ASGI middleware: counts and times every HTTP request by its route template."""

    def __init__(self, app: ASGIApp, metrics: CenterMetrics) -> None:
        self.app = app
        self.metrics = metrics

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        status = 500

        async def record_status(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
            await send(message)

        try:
            await self.app(scope, receive, record_status)
        finally:
            route = scope.get("route")
            # Unmatched paths share one label, so scanners cannot grow the label set.
            template = getattr(route, "path", None) or "unmatched"
            method = scope.get("method", "GET")
            method = method if method in _METHODS else "other"
            self.metrics.requests.labels(method, template, str(status)).inc()
            self.metrics.request_seconds.labels(method, template).observe(
                time.perf_counter() - started)
            if status >= 500:
                self.metrics.errors.labels("http_5xx").inc()
            elif status >= 400:
                self.metrics.errors.labels("http_4xx").inc()
