"""Speech-to-text with faster-whisper and the prepared Whisper base model (int8 on CPU).

Whisper was trained on 30-second windows, and faster-whisper pads every request to one:
on two cores the encoder then spends about half a second on a three-second command,
mostly on silence. CTranslate2 also accepts a shorter window, whose cost falls faster than
its length (attention is quadratic), so a request shorter than `window_max` is encoded
in a window of its own length plus `window_margin` of silence, at least `window_min`
(about five times faster here, same words on the bench); longer requests take
faster-whisper's usual path. What Whisper goes on to say after the request, the request
again or a sentence of the hot words, is taken out (see repeats.py).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from jarvis.node.voice.audio import SAMPLE_RATE, Audio
from jarvis.node.voice.models import WHISPER_BASE, resolve_bundle
from jarvis.node.voice.repeats import without_repeats

__all__ = ["WhisperSettings", "WhisperSpeechToText"]

_TOKENS_PER_SECOND = 6  # generous: speech is about 3 words, 4 tokens a second


@dataclass(frozen=True)
class WhisperSettings:
    language: str = "en"
    # A beam of three: fewer word errors in every condition of the voice bench (most in
    # noise), for 0.1-0.2 s more a request on two cores (docs/voice.md, "Measured").
    beam_size: int = 3
    threads: int = 0  # 0: one per core (CTranslate2's own default of 4 oversubscribes 2 cores)
    compute_type: str = "int8"
    short_window: bool = True  # encode short requests in a window of their own length
    # Silence after the request in that window, and the least window: with less, Whisper
    # tends to say a short request twice ("Set a timer. Set a timer.").
    window_margin: float = 3.0
    window_min: float = 10.0
    window_max: float = 25.0  # longer requests use the full 30-second window
    no_repeat_ngram: int = 3  # a short window tempts Whisper to say the request again
    drop_repeats: bool = True  # take out what it says after the request (repeats.py)

    def __post_init__(self) -> None:
        if self.beam_size < 1:
            raise ValueError(f"the beam size must be 1 or more (1: greedy), not {self.beam_size}")


class WhisperSpeechToText:
    """A `SpeechToText` engine; loading it fails with the prepare command when the model is
    missing."""

    def __init__(self, settings: WhisperSettings | None = None, data_dir: Path | None = None):
        from faster_whisper import WhisperModel
        from faster_whisper.tokenizer import Tokenizer
        from faster_whisper.transcribe import get_suppressed_tokens

        self.settings = settings or WhisperSettings()
        folder = resolve_bundle(WHISPER_BASE, data_dir)
        self._model = WhisperModel(
            str(folder),
            device="cpu",
            compute_type=self.settings.compute_type,
            cpu_threads=self.settings.threads or min(os.cpu_count() or 1, 8),
        )
        self._tokenizer = Tokenizer(
            self._model.hf_tokenizer, True, task="transcribe", language=self.settings.language
        )
        self._suppressed = get_suppressed_tokens(self._tokenizer, (-1,))

    def transcribe(self, audio: Audio, hint: str | None = None) -> str:
        if audio.duration < 0.1:
            return ""
        samples = audio.resampled(SAMPLE_RATE).to_float()
        s = self.settings
        if s.short_window and audio.duration + s.window_margin <= s.window_max:
            return self._tidy(self._short_window(samples, hint), hint)
        segments, _ = self._model.transcribe(
            samples,
            language=s.language,
            beam_size=s.beam_size,
            # Hot words rather than an initial prompt: a prompt of example sentences is
            # sometimes copied into the transcript ("roll three twelve-sided dice").
            hotwords=hint or None,
            condition_on_previous_text=False,
            without_timestamps=True,
            vad_filter=False,  # the recorder has already cut the request out
        )
        return self._tidy(" ".join(segment.text.strip() for segment in segments), hint)

    def _tidy(self, text: str, hint: str | None) -> str:
        return without_repeats(text, hint) if self.settings.drop_repeats else text.strip()

    def _short_window(self, samples: np.ndarray, hint: str | None) -> str:
        import ctranslate2

        s = self.settings
        seconds = max(s.window_min, len(samples) / SAMPLE_RATE + s.window_margin)
        padded = np.zeros(round(seconds * SAMPLE_RATE), dtype=np.float32)
        padded[: len(samples)] = samples
        features = self._model.feature_extractor(padded)
        encoded = self._model.model.encode(
            ctranslate2.StorageView.from_array(np.ascontiguousarray(features[None])),
            to_cpu=False,
        )
        prompt = self._model.get_prompt(
            self._tokenizer, [], without_timestamps=True, hotwords=hint or None
        )
        result = self._model.model.generate(
            encoded,
            [prompt],
            beam_size=s.beam_size,
            max_length=len(prompt) + 6 + round(len(samples) / SAMPLE_RATE * _TOKENS_PER_SECOND),
            suppress_blank=True,
            suppress_tokens=self._suppressed,
            no_repeat_ngram_size=s.no_repeat_ngram,
        )
        eot = self._tokenizer.eot
        tokens = [t for t in result[0].sequences_ids[0] if t < eot]
        return self._tokenizer.decode(tokens).strip()
