"""Retention: conversations nobody touched for `retention_days` are deleted by the center.

The center sweeps when it starts and then every `retention_interval` seconds. Several
centers on one database may all sweep: a conversation is deleted once, by whichever
comes first.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from datetime import UTC, datetime, timedelta

from jarvis.center.store import Store

__all__ = ["Retention"]

log = logging.getLogger(__name__)


class Retention:
    """Deletes old conversations from `store`; `days` 0 keeps everything."""

    def __init__(self, store: Store, days: float, interval: float) -> None:
        self.store = store
        self.days = days
        self.interval = interval
        self._sweeping = threading.Lock()

    def sweep(self) -> int:
        """Delete what is older than the retention period now; how many conversations went."""
        if self.days <= 0:
            return 0
        cutoff = datetime.now(UTC) - timedelta(days=self.days)
        with self._sweeping:
            deleted = self.store.delete_older_than(cutoff)
        if deleted:
            log.info("retention: deleted %d conversation(s) idle for %g days", deleted, self.days)
        return deleted

    async def run(self) -> None:
        """Sweep now and then periodically, until cancelled; a failed sweep is retried later."""
        if self.days <= 0:
            return
        while True:
            try:
                await asyncio.to_thread(self.sweep)
            except Exception as exc:  # the database may be down for a while: serve on
                log.warning("retention sweep failed: %s: %s", type(exc).__name__, exc)
            await asyncio.sleep(self.interval)

    def close(self) -> None:
        """Wait for a sweep in progress, so the store can be closed under it."""
        with self._sweeping:
            pass
