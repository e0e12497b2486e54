"""Voice activity detection with `pymicro-vad` (a small neural detector, 10 ms frames)."""

from __future__ import annotations

__all__ = ["MicroVadDetector"]


class MicroVadDetector:
    """A `VoiceActivity` engine; the first ~0.75 s after a reset give -1 (warming up)."""

    def __init__(self) -> None:
        from pymicro_vad import MicroVad

        self._vad = MicroVad()

    def speech_probability(self, frame: bytes) -> float:
        return float(self._vad.process_10ms(frame))

    def reset(self) -> None:
        self._vad.reset()
