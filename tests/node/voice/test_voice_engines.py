"""Choosing engines: in-process by default, Wyoming servers from the environment or flags."""

from __future__ import annotations

import pytest

from jarvis.node.voice.engines import EngineSettings, load_engines
from jarvis.node.voice.wake_word import WakeWordSettings
from jarvis.node.voice.wyoming import WyomingError


def test_wyoming_servers_come_from_the_environment_and_flags_win(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("JARVIS_WYOMING_STT", "tcp://big:10300")
    monkeypatch.setenv("JARVIS_WYOMING_TTS", "tcp://big:10200")
    monkeypatch.delenv("JARVIS_WYOMING_WAKE", raising=False)

    settings = EngineSettings.from_env(tts_uri="tcp://other:10200", stt_uri=None)

    assert settings.stt_uri == "tcp://big:10300"
    assert settings.tts_uri == "tcp://other:10200"
    assert settings.wake_uri is None


def test_an_unreachable_wake_word_server_is_a_clear_error() -> None:
    settings = EngineSettings(wake_uri="tcp://127.0.0.1:9", stt_uri="tcp://127.0.0.1:9",
                              tts_uri="tcp://127.0.0.1:9")
    with pytest.raises(WyomingError, match=r"tcp://127\.0\.0\.1:9"):
        load_engines(settings=settings)


def test_a_wake_word_sensitivity_outside_0_to_1_is_refused() -> None:
    with pytest.raises(ValueError, match="between 0 and 1"):
        WakeWordSettings(sensitivity=1.5)
