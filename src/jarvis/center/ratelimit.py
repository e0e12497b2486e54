"""A per-node request rate limit: one token bucket for each node, kept in memory.

A node may send `burst` requests at once, then `per_minute` a minute on average; a
request over the limit is refused with the seconds until the next one is accepted.
Each center process counts on its own (two centers on one database allow twice as much).
"""

from __future__ import annotations

import math
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["RateLimit", "RateLimitedError", "RateLimiter"]

# Buckets kept at most: a node silent long enough to be forgotten has a full bucket anyway.
_MAX_BUCKETS = 4096


@dataclass(frozen=True)
class RateLimit:
    """`per_minute` requests a minute on average, `burst` at once; `per_minute` 0: no limit."""

    per_minute: float = 120.0
    burst: int = 30

    @property
    def enabled(self) -> bool:
        return self.per_minute > 0


class RateLimitedError(RuntimeError):
    """A node sent more requests than its rate limit allows."""

    def __init__(self, node: str, retry_after: float, limit: RateLimit) -> None:
        who = f"node {node!r}" if node else "nodes without a node_id"
        super().__init__(
            f"too many requests from {who}: the limit is {limit.burst} at once and "
            f"{limit.per_minute:g} a minute; retry after {math.ceil(retry_after)} s"
        )
        self.node = node
        self.retry_after = retry_after


class RateLimiter:
    """Token buckets by node; `admit(node)` takes a token or raises RateLimitedError."""

    def __init__(self, limit: RateLimit, clock: Callable[[], float] = time.monotonic) -> None:
        self.limit = limit
        self._clock = clock
        self._rate = limit.per_minute / 60.0
        # node -> (tokens left, when they were counted)
        self._buckets: OrderedDict[str, tuple[float, float]] = OrderedDict()
        self._lock = threading.Lock()

    def admit(self, node: str) -> None:
        """Count one request of `node`; raises RateLimitedError when it is over the limit."""
        if not self.limit.enabled:
            return
        now = self._clock()
        with self._lock:
            tokens, since = self._buckets.pop(node, (float(self.limit.burst), now))
            tokens = min(float(self.limit.burst), tokens + (now - since) * self._rate)
            if tokens < 1.0:
                self._buckets[node] = (tokens, now)
                raise RateLimitedError(node, (1.0 - tokens) / self._rate, self.limit)
            self._buckets[node] = (tokens - 1.0, now)
            while len(self._buckets) > _MAX_BUCKETS:
                self._buckets.popitem(last=False)
