"""Alembic migrations of the center store (run automatically at startup)."""
