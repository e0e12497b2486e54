"""Read-only views of the store for people: nodes, conversations and their turns.

The hot path (`Store`) never runs these; they serve the console and the read API. A turn
is put back together from its trace (`center_turns`) and the messages the same request
wrote, which carry the same `created_at` (one timestamp per commit).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import sqlalchemy as sa

from jarvis.center.store.schema import conversations, messages, turns

__all__ = ["ConversationPage", "Reader", "aware"]


@dataclass
class ConversationPage:
    """One page of conversation summaries, newest first."""

    items: list[dict[str, Any]]
    total: int
    limit: int
    offset: int

    @property
    def next_offset(self) -> int | None:
        after = self.offset + len(self.items)
        return after if after < self.total else None


def aware(value: datetime | None) -> datetime | None:
    """SQLite gives naive UTC times back; every time leaves here with its offset."""
    if value is None or value.tzinfo is not None:
        return value
    return value.replace(tzinfo=UTC)


def _node_column(dialect: str) -> Any:
    """`node_context.node_id` as an SQL expression (the context is stored as JSON text)."""
    if dialect == "postgresql":
        return sa.cast(conversations.c.node_context, sa.JSON)["node_id"].as_string()
    return sa.func.json_extract(conversations.c.node_context, "$.node_id")


class Reader:
    """Queries over the store's tables; every method is one short read transaction."""

    def __init__(self, engine: sa.Engine) -> None:
        self.engine = engine
        self._node = _node_column(engine.dialect.name).label("node_id")

    def nodes(self) -> list[dict[str, Any]]:
        """Every node that started a conversation: id, conversations, last seen."""
        query = (
            sa.select(self._node, sa.func.count(), sa.func.max(conversations.c.updated_at))
            .group_by(self._node)
            .order_by(sa.func.max(conversations.c.updated_at).desc())
        )
        with self.engine.connect() as connection:
            rows = connection.execute(query).all()
        return [
            {"node_id": node, "conversations": count, "last_seen": aware(seen)}
            for node, count, seen in rows
        ]

    def conversations(self, node_id: str | None, limit: int, offset: int) -> ConversationPage:
        """Conversation summaries (of one node when `node_id` is given), newest first."""
        where = [] if node_id is None else [self._node == node_id]
        page = (
            sa.select(conversations.c.id, conversations.c.node_context,
                      conversations.c.voice_command, conversations.c.created_at,
                      conversations.c.updated_at)
            .where(*where)
            .order_by(conversations.c.updated_at.desc(), conversations.c.id)
            .limit(limit)
            .offset(offset)
        )
        count = sa.select(sa.func.count()).select_from(conversations).where(*where)
        with self.engine.connect() as connection:
            rows = connection.execute(page).all()
            total = connection.execute(count).scalar_one()
            summaries = self._turn_summaries(connection, [r.id for r in rows])
        items = []
        for row in rows:
            context = json.loads(row.node_context)
            turn_count, last_stop = summaries.get(row.id, (0, None))
            items.append({
                "id": row.id,
                "node_id": context.get("node_id"),
                "room": context.get("room"),
                "voice_command": row.voice_command,
                "turns": turn_count,
                "last_stop_reason": last_stop,
                "created_at": aware(row.created_at),
                "updated_at": aware(row.updated_at),
            })
        return ConversationPage(items, total, limit, offset)

    @staticmethod
    def _turn_summaries(
        connection: sa.Connection, ids: list[str]
    ) -> dict[str, tuple[int, str | None]]:
        """Per conversation: its number of turns and the stop reason of the last one."""
        if not ids:
            return {}
        last = (
            sa.select(turns.c.conversation_id, sa.func.count().label("n"),
                      sa.func.max(turns.c.id).label("last_id"))
            .where(turns.c.conversation_id.in_(ids))
            .group_by(turns.c.conversation_id)
            .subquery()
        )
        query = sa.select(last.c.conversation_id, last.c.n, turns.c.stop_reason).join(
            turns, turns.c.id == last.c.last_id
        )
        rows = connection.execute(query).all()
        return {r.conversation_id: (r.n, r.stop_reason) for r in rows}

    def conversation(self, conversation_id: str) -> dict[str, Any] | None:
        """The conversation's stored state (tools included), or None when unknown."""
        query = sa.select(conversations).where(conversations.c.id == conversation_id)
        with self.engine.connect() as connection:
            row = connection.execute(query).first()
            if row is None:
                return None
            turn_count = connection.execute(
                sa.select(sa.func.count()).where(turns.c.conversation_id == conversation_id)
            ).scalar_one()
        return {
            "id": row.id,
            "node_context": json.loads(row.node_context),
            "client_tools": json.loads(row.client_tools),
            "available_commands": (
                json.loads(row.available_commands) if row.available_commands else None
            ),
            "pending": json.loads(row.pending) if row.pending else None,
            "voice_command": row.voice_command,
            "turn_count": turn_count,
            "created_at": aware(row.created_at),
            "updated_at": aware(row.updated_at),
        }

    def turns(self, conversation_id: str, limit: int, offset: int) -> list[dict[str, Any]]:
        """Turns oldest first, each with the messages its request wrote."""
        query = (
            sa.select(turns)
            .where(turns.c.conversation_id == conversation_id)
            .order_by(turns.c.id)
            .limit(limit)
            .offset(offset)
        )
        with self.engine.connect() as connection:
            rows = connection.execute(query).all()
            if not rows:
                return []
            written = connection.execute(
                sa.select(messages.c.body, messages.c.created_at)
                .where(messages.c.conversation_id == conversation_id,
                       messages.c.created_at >= rows[0].created_at,
                       messages.c.created_at <= rows[-1].created_at)
                .order_by(messages.c.seq)
            ).all()
        by_time: dict[Any, list[dict[str, Any]]] = {}
        for body, created in written:
            by_time.setdefault(created, []).append(json.loads(body))
        return [
            {
                "id": r.id,
                "endpoint": r.endpoint,
                "stop_reason": r.stop_reason,
                "duration_ms": r.duration_ms,
                "created_at": aware(r.created_at),
                "trace": json.loads(r.trace),
                "messages": by_time.get(r.created_at, []),
            }
            for r in rows
        ]

    def latest_tools(self, node_id: str) -> dict[str, Any] | None:
        """The tools and context of the node's most recent conversation (what it registered)."""
        query = (
            sa.select(conversations.c.id)
            .where(self._node == node_id)
            .order_by(conversations.c.updated_at.desc())
            .limit(1)
        )
        with self.engine.connect() as connection:
            found = connection.execute(query).scalar()
        return None if found is None else self.conversation(found)
