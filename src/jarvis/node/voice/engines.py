"""The four engines the voice loop needs, and how the defaults are chosen."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from jarvis.node.voice.interfaces import SpeechToText, TextToSpeech, VoiceActivity, WakeWord
from jarvis.node.voice.stt import WhisperSettings
from jarvis.node.voice.wake_word import WakeWordSettings

__all__ = ["EngineSettings", "VoiceEngines", "load_engines"]


@dataclass
class VoiceEngines:
    """Any object with the right methods fits each slot (see `interfaces`)."""

    wake_word: WakeWord
    vad: VoiceActivity
    stt: SpeechToText
    tts: TextToSpeech


@dataclass(frozen=True)
class EngineSettings:
    """Which engines to load: in-process by default, Wyoming servers where a URI is given."""

    wake_word: WakeWordSettings = field(default_factory=WakeWordSettings)
    whisper: WhisperSettings = field(default_factory=WhisperSettings)
    stt_uri: str | None = None  # e.g. tcp://bigbox:10300 (wyoming-faster-whisper)
    tts_uri: str | None = None  # e.g. tcp://bigbox:10200 (wyoming-piper)
    tts_voice: str | None = None  # a voice the TTS server knows (its default otherwise)
    wake_uri: str | None = None  # e.g. tcp://bigbox:10400 (wyoming-openwakeword)

    @classmethod
    def from_env(cls, **overrides: object) -> EngineSettings:
        """`JARVIS_WYOMING_STT`, `_TTS`, `_VOICE` and `_WAKE`, then `overrides` (the command
        line) where given."""
        values: dict[str, object] = {
            "wake_uri": os.environ.get("JARVIS_WYOMING_WAKE") or None,
            "stt_uri": os.environ.get("JARVIS_WYOMING_STT") or None,
            "tts_uri": os.environ.get("JARVIS_WYOMING_TTS") or None,
            "tts_voice": os.environ.get("JARVIS_WYOMING_VOICE") or None,
        }
        values.update({k: v for k, v in overrides.items() if v is not None})
        return cls(**values)  # type: ignore[arg-type]


def load_engines(
    data_dir: Path | None = None, settings: EngineSettings | None = None
) -> VoiceEngines:
    """openWakeWord, microVAD, faster-whisper and Piper in-process, or the Wyoming servers
    `settings` names (voice activity is always in-process).

    Raises `jarvis.model_files.ModelMissingError` (naming `jarvis model prepare --voice`)
    when an in-process engine's model is not prepared.
    """
    from jarvis.node.voice.vad import MicroVadDetector
    from jarvis.node.voice.wake_word import load_wake_word

    settings = settings or EngineSettings()
    stt: SpeechToText
    tts: TextToSpeech
    if settings.stt_uri:
        from jarvis.node.voice.wyoming import WyomingSpeechToText

        stt = WyomingSpeechToText(settings.stt_uri, language=settings.whisper.language)
    else:
        from jarvis.node.voice.stt import WhisperSpeechToText

        stt = WhisperSpeechToText(settings.whisper, data_dir)
    if settings.tts_uri:
        from jarvis.node.voice.wyoming import WyomingTextToSpeech

        tts = WyomingTextToSpeech(settings.tts_uri, voice=settings.tts_voice)
    else:
        from jarvis.node.voice.tts import PiperTextToSpeech

        tts = PiperTextToSpeech(data_dir)
    wake_word: WakeWord
    if settings.wake_uri:
        from jarvis.node.voice.wyoming import WyomingWakeWord

        wake_word = WyomingWakeWord(settings.wake_uri, model=settings.wake_word.model)
    else:
        wake_word = load_wake_word(settings.wake_word)
    return VoiceEngines(wake_word=wake_word, vad=MicroVadDetector(), stt=stt, tts=tts)
