"""Fixtures of the node tests: an isolated data folder and environment per test."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh `JARVIS_DATA_DIR`, with no key, center or tool paths leaking in."""
    path = tmp_path / "jarvis-data"
    path.mkdir()
    monkeypatch.setenv("JARVIS_DATA_DIR", str(path))
    for name in ("JARVIS_SECRET_KEY", "JARVIS_CENTER_URL", "JARVIS_CENTER_KEY", "JARVIS_TOOLS",
                 "JARVIS_CONFIG", "JARVIS_BUILTINS_OFF"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("JARVIS_TIMEZONE", "Europe/Paris")
    return path
