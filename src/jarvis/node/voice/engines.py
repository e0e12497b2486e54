"""The four engines the voice loop needs, and the in-process defaults."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from jarvis.node.voice.interfaces import SpeechToText, TextToSpeech, VoiceActivity, WakeWord
from jarvis.node.voice.stt import WhisperSettings
from jarvis.node.voice.wake_word import WakeWordSettings

__all__ = ["VoiceEngines", "load_engines"]


@dataclass
class VoiceEngines:
    """Any object with the right methods fits each slot (see `interfaces`)."""

    wake_word: WakeWord
    vad: VoiceActivity
    stt: SpeechToText
    tts: TextToSpeech


def load_engines(
    data_dir: Path | None = None,
    *,
    wake_word: WakeWordSettings | None = None,
    whisper: WhisperSettings | None = None,
) -> VoiceEngines:
    """openWakeWord, microVAD, faster-whisper and Piper, all offline.

    Raises `jarvis.model_files.ModelMissingError` (naming `jarvis model prepare --voice`)
    when the speech models are not prepared.
    """
    from jarvis.node.voice.stt import WhisperSpeechToText
    from jarvis.node.voice.tts import PiperTextToSpeech
    from jarvis.node.voice.vad import MicroVadDetector
    from jarvis.node.voice.wake_word import load_wake_word

    return VoiceEngines(
        wake_word=load_wake_word(wake_word),
        vad=MicroVadDetector(),
        stt=WhisperSpeechToText(whisper, data_dir),
        tts=PiperTextToSpeech(data_dir),
    )
