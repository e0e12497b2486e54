"""Where Jarvis keeps its files, shared by the center and the node."""

from __future__ import annotations

import os
from pathlib import Path


def data_dir() -> Path:
    """`JARVIS_DATA_DIR`, else `~/.local/share/jarvis` (created on first use)."""
    configured = os.environ.get("JARVIS_DATA_DIR")
    path = Path(configured).expanduser() if configured else Path.home() / ".local/share/jarvis"
    path.mkdir(parents=True, exist_ok=True)
    return path
