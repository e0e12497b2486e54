"""Timers and reminders are announced once when due, through the chat's output function."""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta
from pathlib import Path

from jarvis.node import NodeSettings, NodeStore, Scheduler, open_node

NOW = datetime(2025, 3, 14, 12, 0, tzinfo=UTC)


def _iso(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def test_due_entries_are_announced_once_and_marked_fired(data_dir: Path) -> None:
    storage = NodeStore(data_dir).storage
    storage.set("timers", "t1", {"id": "t1", "label": "pasta", "due_at": _iso(NOW),
                                 "created_at": _iso(NOW - timedelta(minutes=5)), "fired": False,
                                 "announcement": "Your 5 minute pasta timer is done."})
    storage.set("timers", "t2", {"id": "t2", "label": "tea", "fired": False,
                                 "due_at": _iso(NOW + timedelta(minutes=1)),
                                 "created_at": _iso(NOW)})
    storage.set("reminders", "r1", {"id": "r1", "text": "call mum", "fired": False,
                                    "due_at": _iso(NOW - timedelta(seconds=30)),
                                    "created_at": _iso(NOW - timedelta(hours=1))})
    storage.set("reminders", "r0", {"id": "r0", "text": "old", "fired": True,
                                    "due_at": _iso(NOW - timedelta(days=1)),
                                    "created_at": _iso(NOW - timedelta(days=2))})
    said: list[str] = []
    clock = [NOW]
    scheduler = Scheduler(storage, said.append, clock=lambda: clock[0])

    assert scheduler.check() == ["Your 5 minute pasta timer is done.", "Reminder: call mum"]
    assert said == ["Your 5 minute pasta timer is done.", "Reminder: call mum"]
    assert storage.get("timers", "t1")["fired"] is True
    assert storage.get("reminders", "r1")["fired"] is True
    assert storage.get("timers", "t2")["fired"] is False

    assert scheduler.check() == []  # nothing twice
    clock[0] = NOW + timedelta(minutes=2)
    assert scheduler.check() == ["Your tea timer is done."]


def test_background_thread_announces_a_timer_set_by_the_builtin_command(data_dir: Path) -> None:
    node = open_node(NodeSettings(data_dir=data_dir, timezone="Europe/Paris"))
    result = node.service.process_voice_command("set a timer for 1 second for eggs")
    assert result.pre_routed, "the timer command routes this locally"
    heard = threading.Event()
    said: list[str] = []

    def announce(message: str) -> None:
        said.append(message)
        heard.set()

    with Scheduler(node.store.storage, announce, interval=0.05):
        assert heard.wait(5.0)
    assert len(said) == 1 and "eggs timer is done" in said[0]
    [entry] = node.store.storage.items("timers").values()
    assert entry["fired"] is True
    node.close()


def test_a_failing_announcer_does_not_repeat_or_stop_the_scheduler(data_dir: Path) -> None:
    storage = NodeStore(data_dir).storage
    storage.set("reminders", "r1", {"id": "r1", "text": "stretch", "fired": False,
                                    "due_at": _iso(NOW), "created_at": _iso(NOW)})

    def broken(message: str) -> None:
        raise OSError("speaker unplugged")

    scheduler = Scheduler(storage, broken, clock=lambda: NOW)
    assert scheduler.check() == ["Reminder: stretch"]
    assert scheduler.check() == []
