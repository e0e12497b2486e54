"""Conversations, messages and per-turn traces.

Revision ID: 0001_initial
Revises:
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001_initial"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "center_conversations",
        sa.Column("id", sa.String(200), primary_key=True),
        sa.Column("node_context", sa.Text, nullable=False),
        sa.Column("client_tools", sa.Text, nullable=False),
        sa.Column("available_commands", sa.Text, nullable=True),
        sa.Column("pending", sa.Text, nullable=True),
        sa.Column("voice_command", sa.Text, nullable=False, server_default=""),
        sa.Column("message_count", sa.Integer, nullable=False, server_default="0"),
        sa.Column("version", sa.Integer, nullable=False, server_default="0"),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_table(
        "center_messages",
        sa.Column("conversation_id", sa.String(200), primary_key=True),
        sa.Column("seq", sa.Integer, primary_key=True, autoincrement=False),
        sa.Column("role", sa.String(20), nullable=False),
        sa.Column("body", sa.Text, nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_table(
        "center_turns",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("conversation_id", sa.String(200), nullable=False),
        sa.Column("endpoint", sa.String(40), nullable=False),
        sa.Column("stop_reason", sa.String(40), nullable=True),
        sa.Column("duration_ms", sa.Float, nullable=False),
        sa.Column("trace", sa.Text, nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index("ix_center_turns_conversation_id", "center_turns", ["conversation_id"])


def downgrade() -> None:
    op.drop_index("ix_center_turns_conversation_id", table_name="center_turns")
    op.drop_table("center_turns")
    op.drop_table("center_messages")
    op.drop_table("center_conversations")
