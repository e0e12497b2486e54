"""Audio sources and sinks in memory: a recorded request in, the spoken reply collected.

They let the voice loop run without devices: `jarvis listen --wav` and the tests use them.
"""

from __future__ import annotations

from jarvis.node.voice.audio import Audio

__all__ = ["ArraySource", "CollectingSink"]


class ArraySource:
    """An `AudioSource` over recorded audio; `position` is how many frames were read."""

    def __init__(self, audio: Audio) -> None:
        self._frames = list(audio.frames())
        self.position = 0

    def read(self) -> bytes | None:
        if self.position >= len(self._frames):
            return None
        frame = self._frames[self.position]
        self.position += 1
        return frame

    def close(self) -> None:
        self.position = len(self._frames)


class CollectingSink:
    """An `AudioSink` that keeps what it is given; it never stays busy playing."""

    def __init__(self) -> None:
        self.played: list[Audio] = []

    def play(self, audio: Audio) -> None:
        self.played.append(audio)

    def playing(self) -> bool:
        return False

    def stop(self) -> None:
        pass

    def audio(self, rate: int | None = None) -> Audio:
        """Everything played, one piece after the other, at `rate` (default: the first's)."""
        if not self.played:
            return Audio.silence(0)
        return Audio.join(self.played, rate or self.played[0].rate)

    def close(self) -> None:
        pass
