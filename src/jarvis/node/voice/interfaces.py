"""The small interfaces every voice engine and audio device implements.

An engine is anything with these methods: the in-process engines in this package, a
Wyoming client, or a test double. Audio enters as 16 kHz mono 16-bit frames of 10 ms
(`audio.FRAME_BYTES`), leaves as `Audio` at the engine's own rate.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Protocol, runtime_checkable

from jarvis.node.voice.audio import Audio

__all__ = [
    "AudioSink",
    "AudioSource",
    "SpeechToText",
    "TextToSpeech",
    "VoiceActivity",
    "WakeWord",
]


@runtime_checkable
class WakeWord(Protocol):
    """Spots the wake phrase in a stream of frames."""

    phrase: str

    def process(self, frame: bytes) -> bool:
        """Feed one frame; True when the wake phrase has just been heard."""
        ...

    def reset(self) -> None:
        """Forget what was heard (after a detection, or before listening again)."""
        ...


@runtime_checkable
class VoiceActivity(Protocol):
    """Says whether a frame holds speech."""

    def speech_probability(self, frame: bytes) -> float:
        """0..1 for one 10 ms frame (negative while the detector is still warming up)."""
        ...

    def reset(self) -> None: ...


@runtime_checkable
class SpeechToText(Protocol):
    """Turns a recorded request into text."""

    def transcribe(self, audio: Audio, hint: str | None = None) -> str:
        """The words heard; `hint` is text that makes likely words likelier."""
        ...


@runtime_checkable
class TextToSpeech(Protocol):
    """Speaks text."""

    def synthesize(self, text: str) -> Iterator[Audio]:
        """The spoken text, one `Audio` per sentence, so playback can start early."""
        ...


@runtime_checkable
class AudioSource(Protocol):
    """Where sound comes from: a microphone, a file, an array."""

    def read(self) -> bytes | None:
        """The next 10 ms frame (16 kHz mono 16-bit), or None when the source has ended."""
        ...

    def close(self) -> None: ...


@runtime_checkable
class AudioSink(Protocol):
    """Where Jarvis's voice goes: a speaker, a file."""

    def play(self, audio: Audio) -> None:
        """Queue `audio` after what is already playing; returns at once."""
        ...

    def playing(self) -> bool:
        """True while queued audio is still being played."""
        ...

    def stop(self) -> None:
        """Drop everything queued and go quiet now (barge-in)."""
        ...

    def close(self) -> None: ...
