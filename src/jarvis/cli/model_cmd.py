"""jarvis model (the embedded LLM's model file)."""

from __future__ import annotations

import typer


def register(app: typer.Typer) -> None:
    """Add this part's commands to the main app."""
