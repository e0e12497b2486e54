"""Stand-in voice engines for tests that need no model.

Sound is drawn by kind: a wake frame carries a marker sample the stand-in wake word
spots, speech is a loud tone, silence is zeros.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from jarvis.node.voice import ArraySource, Audio, CollectingSink

WAKE_MARK = 12_345


def sound(*parts: tuple[str, float]) -> Audio:
    chunks = []
    for kind, seconds in parts:
        n = int(seconds * 16_000)
        if kind == "wake":
            chunk = np.full(n, WAKE_MARK, dtype=np.int16)
        elif kind == "speech":
            chunk = (8_000 * np.sin(np.arange(n) * 0.2)).astype(np.int16)
        else:
            chunk = np.zeros(n, dtype=np.int16)
        chunks.append(chunk)
    return Audio(np.concatenate(chunks))


class MarkWakeWord:
    phrase = "hey jarvis"

    def __init__(self) -> None:
        self.run = 0

    def process(self, frame: bytes) -> bool:
        marked = np.frombuffer(frame, np.int16)[0] == WAKE_MARK
        self.run = self.run + 1 if marked else 0
        return self.run == 20  # 0.2 s of wake frames

    def reset(self) -> None:
        self.run = 0


class LoudnessVad:
    def speech_probability(self, frame: bytes) -> float:
        samples = np.frombuffer(frame, np.int16)
        return 1.0 if samples[0] != WAKE_MARK and np.abs(samples).mean() > 1000 else 0.0

    def reset(self) -> None:
        pass


class ScriptedStt:
    """Answers the next scripted text for each recording (and keeps what it was given)."""

    def __init__(self, texts: list[str]) -> None:
        self.texts = list(texts)
        self.heard: list[float] = []

    def transcribe(self, audio: Audio, hint: str | None = None) -> str:
        self.heard.append(audio.duration)
        return self.texts.pop(0)


class ToneTts:
    def synthesize(self, text: str) -> Iterator[Audio]:
        for sentence in text.split(". "):
            yield sound(("speech", 0.02 * len(sentence)))


class PacedSink(CollectingSink):
    """Plays in step with the source, like a speaker beside a microphone."""

    def __init__(self, source: ArraySource) -> None:
        super().__init__()
        self.source = source
        self.until = 0
        self.stopped = 0

    def play(self, audio: Audio) -> None:
        super().play(audio)
        self.until = max(self.until, self.source.position) + round(audio.duration * 100)

    def playing(self) -> bool:
        return self.source.position < self.until

    def stop(self) -> None:
        self.stopped += 1
        self.until = 0
