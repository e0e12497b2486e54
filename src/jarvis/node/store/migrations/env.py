"""Alembic environment of the node database; the caller passes an open connection."""

from __future__ import annotations

from alembic import context

from jarvis.node.store.schema import metadata

connection = context.config.attributes.get("connection")
if connection is None:
    raise RuntimeError("the node store runs its migrations with an open connection")

context.configure(connection=connection, target_metadata=metadata, render_as_batch=True)
with context.begin_transaction():
    context.run_migrations()
