"""Alembic environment: the connection comes from `jarvis.center.store.migrate`."""

from __future__ import annotations

from alembic import context

from jarvis.center.store.schema import metadata

connection = context.config.attributes.get("connection")
if connection is None:
    raise RuntimeError("run the center migrations through jarvis.center.store.migrate")

context.configure(
    connection=connection,
    target_metadata=metadata,
    version_table="center_alembic_version",
    render_as_batch=connection.dialect.name == "sqlite",
)
with context.begin_transaction():
    context.run_migrations()
