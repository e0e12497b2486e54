"""Fixtures for every test: secrets keys stay in the test's own folder."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def key_dir(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Keys go to a fresh folder as files: never to the real ~/.config or OS keyring."""
    folder = tmp_path_factory.mktemp("keys") / "keys"
    monkeypatch.setenv("JARVIS_KEY_DIR", str(folder))
    monkeypatch.setenv("JARVIS_SECRET_KEY_STORE", "file")
    return folder
