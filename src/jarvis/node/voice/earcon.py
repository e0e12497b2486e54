"""The short sound that says "I am listening" after the wake word."""

from __future__ import annotations

import numpy as np

from jarvis.node.voice.audio import SAMPLE_RATE, Audio

__all__ = ["earcon"]


def earcon(rate: int = SAMPLE_RATE) -> Audio:
    """Two rising tones, 0.16 s in all, faded in and out so they do not click."""
    tones = []
    for pitch in (880.0, 1320.0):
        t = np.arange(int(0.08 * rate)) / rate
        fade = np.minimum(1.0, np.minimum(t, t[::-1]) / 0.01)
        tones.append(0.3 * np.sin(2 * np.pi * pitch * t) * fade)
    return Audio.from_float(np.concatenate(tones), rate)
