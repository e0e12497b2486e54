"""The node database's tables (the migrations in `migrations/` create them)."""

from __future__ import annotations

from sqlalchemy import (
    Boolean,
    Column,
    DateTime,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Table,
    Text,
    UniqueConstraint,
)

__all__ = ["command_storage", "metadata", "secrets"]

metadata = MetaData()

secrets = Table(
    "secrets",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("key", String(200), nullable=False),
    Column("scope", String(50), nullable=False, default="integration"),
    Column("value_type", String(50), nullable=False, default="string"),
    Column("required", Boolean, nullable=False, default=True),
    Column("description", Text, nullable=False, default=""),
    # Fernet token of the value; NULL means "declared but not set yet".
    Column("value_encrypted", LargeBinary, nullable=True),
    Column("created_at", DateTime(timezone=True), nullable=False),
    Column("updated_at", DateTime(timezone=True), nullable=False),
    UniqueConstraint("key", "scope", name="uq_secrets_key_scope"),
)

command_storage = Table(
    "command_storage",
    metadata,
    Column("namespace", String(200), primary_key=True),
    Column("key", String(500), primary_key=True),
    Column("value", Text, nullable=False),  # JSON text
    Column("updated_at", DateTime(timezone=True), nullable=False),
)
