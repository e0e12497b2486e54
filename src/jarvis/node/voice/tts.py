"""Text-to-speech with Piper and the prepared `en_US-joe-medium` voice."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from jarvis.node.voice.audio import Audio
from jarvis.node.voice.models import piper_voice_files

__all__ = ["PiperSettings", "PiperTextToSpeech"]


@dataclass(frozen=True)
class PiperSettings:
    """None keeps the voice's own value. Zero noise makes the same text sound the same
    every time (the tests' requests); the voice's noise sounds more natural."""

    length_scale: float | None = None  # > 1 speaks slower
    noise_scale: float | None = None
    noise_w_scale: float | None = None


class PiperTextToSpeech:
    """A `TextToSpeech` engine; each sentence is synthesized when the previous one is taken."""

    def __init__(self, data_dir: Path | None = None, settings: PiperSettings | None = None):
        from piper import PiperVoice, SynthesisConfig

        settings = settings or PiperSettings()
        model, config = piper_voice_files(data_dir)
        self._voice = PiperVoice.load(model, config)
        self._config = SynthesisConfig(
            length_scale=settings.length_scale,
            noise_scale=settings.noise_scale,
            noise_w_scale=settings.noise_w_scale,
        )
        self.sample_rate = self._voice.config.sample_rate

    def synthesize(self, text: str) -> Iterator[Audio]:
        for chunk in self._voice.synthesize(text, self._config):
            yield Audio(chunk.audio_int16_array, chunk.sample_rate)
