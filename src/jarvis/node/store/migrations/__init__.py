"""Alembic migrations of the node database."""
