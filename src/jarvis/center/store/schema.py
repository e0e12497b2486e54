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
    # The authenticated node that started it (NULL: started with authentication off).
    sa.Column("owner", sa.String(200), nullable=True, index=True),
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

# One row per node allowed to call the API; only a SHA-256 digest of its key is kept.
nodes = sa.Table(
    "center_nodes",
    metadata,
    sa.Column("name", sa.String(200), primary_key=True),
    sa.Column("key_hash", sa.String(64), nullable=False, unique=True),
    sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    sa.Column("last_seen_at", sa.DateTime(timezone=True), nullable=True),
    sa.Column("revoked_at", sa.DateTime(timezone=True), nullable=True),
)

# The admin token generated at the first `jarvis serve` (digest only; one row, id 1).
admin_tokens = sa.Table(
    "center_admin_token",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=False),
    sa.Column("token_hash", sa.String(64), nullable=False),
    sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
)
