"""Alembic upgrades, one at a time in a process.

Alembic keeps the running migration's context in module globals (`alembic.context`,
`alembic.op`): two upgrades in two threads, such as a center starting in the background
beside its node's store, would read each other's configuration and fail.
"""

from __future__ import annotations

import threading

from alembic import command
from alembic.config import Config

__all__ = ["upgrade_to_head"]

_ONE_AT_A_TIME = threading.Lock()


def upgrade_to_head(config: Config) -> None:
    """Apply every migration of `config` not yet applied, after any other upgrade here."""
    with _ONE_AT_A_TIME:
        command.upgrade(config, "head")
