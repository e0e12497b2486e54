"""The node's voice: wake word, voice activity, speech-to-text, text-to-speech, the loop.

Each engine sits behind a small interface (`interfaces`). Names are imported on first use,
so `jarvis` starts (and `jarvis model prepare --voice` runs) without the voice libraries.
"""

from __future__ import annotations

import importlib
from typing import Any

_HOMES = {
    "Audio": "audio",
    "AudioFormatError": "audio",
    "read_wav": "audio",
    "write_wav": "audio",
    "ArraySource": "buffers",
    "CollectingSink": "buffers",
    "EngineSettings": "engines",
    "VoiceEngines": "engines",
    "load_engines": "engines",
    "AudioSink": "interfaces",
    "AudioSource": "interfaces",
    "SpeechToText": "interfaces",
    "TextToSpeech": "interfaces",
    "VoiceActivity": "interfaces",
    "WakeWord": "interfaces",
    "Exchange": "loop",
    "LoopSettings": "loop",
    "Reply": "loop",
    "Responder": "loop",
    "Say": "loop",
    "VoiceLoop": "loop",
    "prepare_voice_models": "models",
    "voice_models_ready": "models",
    "RecorderSettings": "recorder",
    "service_responder": "responder",
    "recognition_hint": "vocabulary",
}

__all__ = sorted(_HOMES)


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'jarvis.node.voice' has no attribute {name!r}")
    return getattr(importlib.import_module(f"jarvis.node.voice.{home}"), name)
