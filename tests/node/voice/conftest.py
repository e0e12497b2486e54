"""Voice fixtures: the prepared speech models, loaded once per session.

Tests that need the models skip when they are not prepared (`jarvis model prepare
--voice`), and fail instead under JARVIS_REQUIRE_MODEL=1 (as `make test` sets it). The
models are looked up in JARVIS_VOICE_DATA_DIR, else the data folder of the session (read
before any test moves JARVIS_DATA_DIR to a temporary folder).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from jarvis.paths import data_dir

_VOICE_DATA = Path(os.environ.get("JARVIS_VOICE_DATA_DIR") or data_dir())


def _require(reason: str) -> None:
    if os.environ.get("JARVIS_REQUIRE_MODEL") == "1":
        pytest.fail(f"{reason} (JARVIS_REQUIRE_MODEL=1)")
    pytest.skip(reason)


@pytest.fixture(scope="session")
def voice_data_dir() -> Path:
    """The data folder holding the prepared voice models."""
    pytest.importorskip("numpy")
    from jarvis.node.voice.models import voice_models_ready

    if not voice_models_ready(_VOICE_DATA):
        _require(f"voice models not prepared in {_VOICE_DATA}: run `jarvis model prepare --voice`")
    return _VOICE_DATA


@pytest.fixture(scope="session")
def engines(voice_data_dir: Path):
    from jarvis.node.voice import load_engines

    return load_engines(voice_data_dir)


@pytest.fixture(scope="session")
def speaker(voice_data_dir: Path):
    """Piper without its random noise: the same text gives the same request every run."""
    from jarvis.node.voice.tts import PiperSettings, PiperTextToSpeech

    return PiperTextToSpeech(voice_data_dir, PiperSettings(noise_scale=0.0, noise_w_scale=0.0))


@pytest.fixture(scope="session")
def espeak() -> None:
    from voice_speech import espeak_available

    if not espeak_available():  # a system tool, not a model: skipped even under REQUIRE_MODEL
        pytest.skip("espeak-ng is not installed (Debian: apt-get install espeak-ng; `make test` "
                    "installs it where apt-get can)")
