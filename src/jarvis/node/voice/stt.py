"""Speech-to-text with faster-whisper and the prepared Whisper base model (int8 on CPU)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from jarvis.node.voice.audio import SAMPLE_RATE, Audio
from jarvis.node.voice.models import WHISPER_BASE, resolve_bundle

__all__ = ["WhisperSettings", "WhisperSpeechToText"]


@dataclass(frozen=True)
class WhisperSettings:
    language: str = "en"
    beam_size: int = 1  # greedy: the short commands gain little from a beam, and it costs time
    threads: int = 0  # 0: one per core (CTranslate2's own default of 4 oversubscribes 2 cores)
    compute_type: str = "int8"


class WhisperSpeechToText:
    """A `SpeechToText` engine; loading it fails with the prepare command when the model is
    missing."""

    def __init__(self, settings: WhisperSettings | None = None, data_dir: Path | None = None):
        from faster_whisper import WhisperModel

        self.settings = settings or WhisperSettings()
        folder = resolve_bundle(WHISPER_BASE, data_dir)
        self._model = WhisperModel(
            str(folder),
            device="cpu",
            compute_type=self.settings.compute_type,
            cpu_threads=self.settings.threads or min(os.cpu_count() or 1, 8),
        )

    def transcribe(self, audio: Audio, hint: str | None = None) -> str:
        if audio.duration < 0.1:
            return ""
        segments, _ = self._model.transcribe(
            audio.resampled(SAMPLE_RATE).to_float(),
            language=self.settings.language,
            beam_size=self.settings.beam_size,
            # Hot words rather than an initial prompt: a prompt of example sentences is
            # sometimes copied into the transcript ("roll three twelve-sided dice").
            hotwords=hint or None,
            condition_on_previous_text=False,
            without_timestamps=True,
            vad_filter=False,  # the recorder has already cut the request out
        )
        return " ".join(segment.text.strip() for segment in segments).strip()
