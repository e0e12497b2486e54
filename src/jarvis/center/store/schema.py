"""The store's tables; the Alembic migrations in `migrations/` create exactly these."""

from __future__ import annotations

import sqlalchemy as sa

metadata = sa.MetaData()

conversations = sa.Table(
    "center_conversations",
    metadata,
    sa.Column("id", sa.String(200), primary_key=True),
    sa.Column("node_context", sa.Text, nullable=False),
    sa.Column("client_tools", sa.Text, nullable=False),
    sa.Column("available_commands", sa.Text, nullable=True),
    # What the conversation waits for: tool results or a user's answer (JSON), or NULL.
    sa.Column("pending", sa.Text, nullable=True),
    sa.Column("voice_command", sa.Text, nullable=False, server_default=""),
    sa.Column("message_count", sa.Integer, nullable=False, server_default="0"),
    # Bumped on every write; a write based on an older version is refused.
    sa.Column("version", sa.Integer, nullable=False, server_default="0"),
    sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
)

messages = sa.Table(
    "center_messages",
    metadata,
    sa.Column("conversation_id", sa.String(200), primary_key=True),
    sa.Column("seq", sa.Integer, primary_key=True, autoincrement=False),
    sa.Column("role", sa.String(20), nullable=False),
    sa.Column("body", sa.Text, nullable=False),
    sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
)

turns = sa.Table(
    "center_turns",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("conversation_id", sa.String(200), nullable=False, index=True),
    sa.Column("endpoint", sa.String(40), nullable=False),
    sa.Column("stop_reason", sa.String(40), nullable=True),
    sa.Column("duration_ms", sa.Float, nullable=False),
    sa.Column("trace", sa.Text, nullable=False),
    sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
)
