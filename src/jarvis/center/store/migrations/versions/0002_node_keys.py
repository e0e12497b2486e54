"""Node keys, the generated admin token, and the owner of each conversation.

Revision ID: 0002_node_keys
Revises: 0001_initial
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002_node_keys"
down_revision = "0001_initial"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "center_nodes",
        sa.Column("name", sa.String(200), primary_key=True),
        sa.Column("key_hash", sa.String(64), nullable=False, unique=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("last_seen_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("revoked_at", sa.DateTime(timezone=True), nullable=True),
    )
    op.create_table(
        "center_admin_token",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=False),
        sa.Column("token_hash", sa.String(64), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    )
    # Conversations from before authentication have no owner: only the admin sees them.
    op.add_column("center_conversations", sa.Column("owner", sa.String(200), nullable=True))
    op.create_index("ix_center_conversations_owner", "center_conversations", ["owner"])


def downgrade() -> None:
    op.drop_index("ix_center_conversations_owner", table_name="center_conversations")
    with op.batch_alter_table("center_conversations") as batch:
        batch.drop_column("owner")
    op.drop_table("center_admin_token")
    op.drop_table("center_nodes")
