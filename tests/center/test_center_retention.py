"""Retention: the center deletes conversations idle for longer than `retention_days`, when
it starts and periodically, on SQLite and on PostgreSQL."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta
from typing import Any

import sqlalchemy as sa
from center_helpers import WEATHER_TOOL, Center, conversation_id

from jarvis.center.llm.scripted import ScriptedBackend, text
from jarvis.center.store.schema import conversations, messages, turns


def _talk(center: Center, cid: str) -> None:
    center.start(cid, [WEATHER_TOOL])
    assert center.command(cid, "hello")["assistant_message"] == "Fine."


def _age(center: Center, cid: str, days: float) -> None:
    """Make the conversation (and its traces) look `days` old."""
    then = datetime.now(UTC) - timedelta(days=days)
    with center.store.engine.begin() as connection:
        connection.execute(conversations.update().where(conversations.c.id == cid)
                           .values(updated_at=then, created_at=then))
        connection.execute(turns.update().where(turns.c.conversation_id == cid)
                           .values(created_at=then))


def _rows(center: Center, cid: str) -> tuple[int, int, int]:
    """(conversation rows, message rows, trace rows) stored for `cid`."""
    with center.store.engine.connect() as connection:
        return tuple(  # type: ignore[return-value]
            connection.execute(sa.select(sa.func.count()).select_from(table)
                               .where(column == cid)).scalar_one()
            for table, column in ((conversations, conversations.c.id),
                                  (messages, messages.c.conversation_id),
                                  (turns, turns.c.conversation_id)))


def _wait_gone(center: Center, cid: str, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while _rows(center, cid)[0] and time.monotonic() < deadline:
        time.sleep(0.05)


def test_a_starting_center_deletes_idle_conversations_and_keeps_the_others(
        make_center: Any) -> None:
    first = make_center(ScriptedBackend([text("Fine.")], loop=True))
    old, recent, kept = conversation_id(), conversation_id(), conversation_id()
    for cid in (old, recent, kept):
        _talk(first, cid)
    _age(first, old, 31)
    _age(first, recent, 29)
    first.close()
    second = make_center(ScriptedBackend([text("Fine.")], loop=True))
    _wait_gone(second, old)
    assert _rows(second, old) == (0, 0, 0)
    assert _rows(second, recent) == (1, 2, 1)
    assert _rows(second, kept) == (1, 2, 1)
    response = second.client.post("/api/v0/voice/command",
                                  json={"conversation_id": old, "voice_command": "hi"})
    assert response.status_code == 404
    assert "call /api/v0/conversation/start first" in response.json()["error"]
    assert second.command(recent, "still here?")["assistant_message"] == "Fine."


def test_a_running_center_sweeps_periodically(make_center: Any) -> None:
    center = make_center(ScriptedBackend([text("Fine.")], loop=True), retention_days=2,
                         retention_interval=0.2)
    old, kept = conversation_id(), conversation_id()
    _talk(center, old)
    _talk(center, kept)
    time.sleep(0.5)  # a few sweeps that find nothing old
    assert _rows(center, old) == (1, 2, 1)
    _age(center, old, 2.5)
    _age(center, kept, 1.5)
    _wait_gone(center, old)
    assert _rows(center, old) == (0, 0, 0)
    assert _rows(center, kept) == (1, 2, 1)
    # A conversation started again under a deleted id begins afresh.
    _talk(center, old)
    assert _rows(center, old) == (1, 2, 1)


def test_retention_of_zero_days_keeps_everything(make_center: Any) -> None:
    first = make_center(ScriptedBackend([text("Fine.")], loop=True))
    cid = conversation_id()
    _talk(first, cid)
    _age(first, cid, 3650)
    first.close()
    second = make_center(ScriptedBackend([]), retention_days=0, retention_interval=0.1)
    time.sleep(0.5)
    assert _rows(second, cid) == (1, 2, 1)
    assert second.server.app.state.retention.sweep() == 0


def test_a_large_backlog_goes_in_several_short_transactions(db_url: str) -> None:
    from jarvis.center.store import Store
    from jarvis.center.store.store import _DELETE_CHUNK

    store = Store(db_url)
    old = datetime.now(UTC) - timedelta(days=40)
    run = conversation_id()
    ids = [f"{run}-{i}" for i in range(2 * _DELETE_CHUNK + 100)]
    row = {"node_context": "{}", "client_tools": "[]", "created_at": old, "updated_at": old}
    try:
        with store.engine.begin() as connection:
            connection.execute(conversations.insert(), [{"id": cid, **row} for cid in ids])
            connection.execute(messages.insert(), [
                {"conversation_id": cid, "seq": 0, "role": "user", "body": "{}",
                 "created_at": old} for cid in ids])
            connection.execute(turns.insert(), [
                {"conversation_id": f"{run}-living", "endpoint": "command", "duration_ms": 1.0,
                 "trace": "{}", "created_at": old} for _ in range(_DELETE_CHUNK + 10)])
        assert store.delete_older_than(datetime.now(UTC) - timedelta(days=30)) >= len(ids)
        with store.engine.connect() as connection:
            for table, column in ((conversations, conversations.c.id),
                                  (messages, messages.c.conversation_id),
                                  (turns, turns.c.conversation_id)):
                left = connection.execute(sa.select(sa.func.count()).select_from(table)
                                          .where(column.like(f"{run}%"))).scalar_one()
                assert left == 0, table.name
    finally:
        store.close()
