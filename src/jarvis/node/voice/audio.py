"""Audio as the voice engines see it: mono 16-bit PCM with its sample rate.

Wake word, voice activity and speech-to-text all take 16 kHz mono 16-bit audio in 10 ms
frames; a WAV in another rate or channel count is converted on reading, anything that is
not integer PCM is refused with a clear `AudioFormatError`. Text-to-speech produces audio
at its voice's own rate (22.05 kHz for Piper's medium voices).
"""

from __future__ import annotations

import wave
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

__all__ = [
    "FRAME_BYTES",
    "FRAME_SAMPLES",
    "SAMPLE_RATE",
    "Audio",
    "AudioFormatError",
    "read_wav",
    "write_wav",
]

SAMPLE_RATE = 16_000
FRAME_SAMPLES = 160  # 10 ms at 16 kHz: the unit of wake word and voice activity detection
FRAME_BYTES = FRAME_SAMPLES * 2
_WIDTHS = {1: np.uint8, 2: np.int16, 4: np.int32}


class AudioFormatError(ValueError):
    """Audio Jarvis cannot read: the message says what it is and what is expected."""


@dataclass(frozen=True)
class Audio:
    """Mono 16-bit samples at `rate` Hz."""

    samples: np.ndarray
    rate: int = SAMPLE_RATE

    @classmethod
    def from_bytes(cls, data: bytes, rate: int = SAMPLE_RATE) -> Audio:
        return cls(np.frombuffer(data, dtype=np.int16), rate)

    @classmethod
    def from_float(cls, samples: np.ndarray, rate: int = SAMPLE_RATE) -> Audio:
        """From floats in [-1, 1] (clipped)."""
        clipped = np.clip(np.asarray(samples, dtype=np.float32), -1.0, 1.0)
        return cls((clipped * 32767).astype(np.int16), rate)

    @classmethod
    def silence(cls, seconds: float, rate: int = SAMPLE_RATE) -> Audio:
        return cls(np.zeros(round(seconds * rate), dtype=np.int16), rate)

    @classmethod
    def join(cls, parts: Iterable[Audio], rate: int = SAMPLE_RATE) -> Audio:
        """The parts one after the other, each converted to `rate`."""
        arrays = [p.resampled(rate).samples for p in parts]
        return cls(np.concatenate(arrays) if arrays else np.zeros(0, np.int16), rate)

    @property
    def duration(self) -> float:
        return len(self.samples) / self.rate

    def to_bytes(self) -> bytes:
        return self.samples.astype("<i2").tobytes()

    def to_float(self) -> np.ndarray:
        return self.samples.astype(np.float32) / 32768.0

    def rms(self) -> float:
        """Root mean square level, 0..1 of full scale."""
        if not len(self.samples):
            return 0.0
        return float(np.sqrt(np.mean(self.to_float() ** 2)))

    def resampled(self, rate: int) -> Audio:
        """The same sound at `rate` Hz (linear interpolation, enough for speech)."""
        if rate == self.rate or not len(self.samples):
            return Audio(self.samples, rate)
        count = round(len(self.samples) * rate / self.rate)
        positions = np.arange(count) * (self.rate / rate)
        values = np.interp(positions, np.arange(len(self.samples)), self.samples.astype(np.float32))
        return Audio(np.round(values).astype(np.int16), rate)

    def frames(self) -> Iterator[bytes]:
        """10 ms frames of the 16 kHz version; the last partial frame is padded with silence."""
        data = self.resampled(SAMPLE_RATE).to_bytes()
        for start in range(0, len(data), FRAME_BYTES):
            yield data[start : start + FRAME_BYTES].ljust(FRAME_BYTES, b"\0")


def read_wav(path: Path) -> Audio:
    """A WAV file as mono 16-bit audio at its own rate (channels averaged)."""
    try:
        with wave.open(str(path), "rb") as wav:
            channels, width, rate = wav.getnchannels(), wav.getsampwidth(), wav.getframerate()
            data = wav.readframes(wav.getnframes())
    except FileNotFoundError:
        raise AudioFormatError(f"{path}: no such file") from None
    except (wave.Error, EOFError) as exc:
        raise AudioFormatError(
            f"{path} is not a PCM WAV file ({exc}); convert it, e.g. "
            f"`sox input -r 16000 -c 1 -b 16 {Path(path).stem}.wav`"
        ) from None
    if width not in _WIDTHS:
        raise AudioFormatError(f"{path}: {8 * width}-bit samples are not supported (8, 16 or 32)")
    samples = np.frombuffer(data, dtype=np.dtype(_WIDTHS[width]).newbyteorder("<"))
    values = samples.astype(np.float32)
    if width == 1:
        values = (values - 128.0) * 256.0
    elif width == 4:
        values = values / 65536.0
    if channels > 1:
        values = values[: len(values) // channels * channels].reshape(-1, channels).mean(axis=1)
    return Audio(np.clip(np.round(values), -32768, 32767).astype(np.int16), rate)


def write_wav(path: Path, audio: Audio) -> Path:
    """Write mono 16-bit PCM; the folder must exist."""
    with wave.open(str(path), "wb") as wav:
        wav.setnchannels(1)
        wav.setsampwidth(2)
        wav.setframerate(audio.rate)
        wav.writeframes(audio.to_bytes())
    return Path(path)
