"""The center's durable store: conversations, messages and per-turn traces (SQLAlchemy)."""

from jarvis.center.store.store import (
    ConcurrentUpdateError,
    ConversationOwnedError,
    ConversationRecord,
    Store,
    TurnWrite,
)

__all__ = [
    "ConcurrentUpdateError", "ConversationOwnedError", "ConversationRecord", "Store", "TurnWrite",
]
