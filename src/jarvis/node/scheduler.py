"""Announces timers and reminders when they are due, while the node runs.

The timer and reminder commands keep their entries in the storage namespaces `timers`
and `reminders` (`due_at` is an ISO-8601 UTC string, `fired` a bool). A background thread
looks for due, unfired entries, marks each fired and announces it through the same
output function the chat uses.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from jarvis.sdk import CommandStorage

__all__ = ["NAMESPACES", "Scheduler", "announcement", "due_entries"]

log = logging.getLogger(__name__)

NAMESPACES = ("timers", "reminders")


def _parse_due(value: Any) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        due = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return due if due.tzinfo else due.replace(tzinfo=UTC)


def _is_due(entry: Any, now: datetime) -> bool:
    if not isinstance(entry, dict) or entry.get("fired"):
        return False
    due = _parse_due(entry.get("due_at"))
    return due is not None and due <= now


def due_entries(storage: CommandStorage, namespace: str, now: datetime) -> list[tuple[str, dict]]:
    """(key, entry) of every unfired entry whose `due_at` has passed, oldest first."""
    found = [(k, v) for k, v in storage.items(namespace).items() if _is_due(v, now)]
    return sorted(found, key=lambda kv: _parse_due(kv[1].get("due_at")) or now)


def announcement(namespace: str, entry: dict[str, Any]) -> str:
    """What the node says when an entry is due."""
    custom = entry.get("announcement")
    if isinstance(custom, str) and custom.strip():
        return custom.strip()
    if namespace == "reminders":
        text = str(entry.get("text") or entry.get("label") or "").strip()
        return f"Reminder: {text}" if text else "You asked me to remind you about something now."
    label = str(entry.get("label") or "").strip()
    if not label:
        return "Your timer is done."
    if label.lower().endswith("timer"):
        return f"Your {label} is done."
    return f"Your {label} timer is done."


class Scheduler:
    """`check()` does one pass; `start()` runs passes every `interval` seconds in a thread."""

    def __init__(
        self,
        storage: CommandStorage,
        announce: Callable[[str], None],
        *,
        interval: float = 1.0,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
        namespaces: tuple[str, ...] = NAMESPACES,
    ) -> None:
        self.storage = storage
        self.announce = announce
        self.interval = interval
        self.clock = clock
        self.namespaces = namespaces
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def check(self) -> list[str]:
        """Announce everything due now; returns what was announced."""
        now = self.clock()
        said: list[str] = []
        for namespace in self.namespaces:
            for key, _entry in due_entries(self.storage, namespace, now):
                # Re-read: the command may have cancelled or changed it meanwhile.
                current = self.storage.get(namespace, key)
                if not _is_due(current, now):
                    continue
                # Marked before speaking: a failing speaker must not repeat it forever.
                self.storage.set(namespace, key, {**current, "fired": True})
                message = announcement(namespace, current)
                try:
                    self.announce(message)
                except Exception as exc:
                    log.warning("announcing %s/%s failed: %s", namespace, key, exc)
                said.append(message)
        return said

    def _loop(self) -> None:
        while not self._stop.is_set():
            try:
                self.check()
            except Exception as exc:  # a bad entry or a locked database must not end the thread
                log.warning("scheduler pass failed: %s", exc)
            self._stop.wait(self.interval)

    def start(self) -> Scheduler:
        if self._thread is None or not self._thread.is_alive():
            self._stop.clear()
            self._thread = threading.Thread(target=self._loop, name="jarvis-scheduler", daemon=True)
            self._thread.start()
        return self

    def stop(self, timeout: float = 5.0) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)
            self._thread = None

    def __enter__(self) -> Scheduler:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
