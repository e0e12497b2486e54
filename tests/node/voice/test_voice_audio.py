"""Audio in and out: WAV formats, resampling, frames, and clear errors for bad files."""

from __future__ import annotations

import wave
from pathlib import Path

import numpy as np
import pytest

from jarvis.node.voice.audio import (
    FRAME_BYTES,
    Audio,
    AudioFormatError,
    read_wav,
    write_wav,
)


def _tone(seconds: float, rate: int) -> np.ndarray:
    t = np.arange(int(seconds * rate)) / rate
    return 0.5 * np.sin(2 * np.pi * 440 * t)


def test_stereo_44k_wav_is_read_as_mono_and_resampled(tmp_path: Path) -> None:
    left = (_tone(1.0, 44_100) * 32767).astype(np.int16)
    path = tmp_path / "stereo.wav"
    with wave.open(str(path), "wb") as wav:
        wav.setnchannels(2)
        wav.setsampwidth(2)
        wav.setframerate(44_100)
        wav.writeframes(np.stack([left, left], axis=1).tobytes())

    audio = read_wav(path)

    assert audio.rate == 44_100 and audio.duration == pytest.approx(1.0)
    frames = list(audio.frames())
    assert len(frames) == 100 and all(len(f) == FRAME_BYTES for f in frames)
    assert audio.resampled(16_000).rms() == pytest.approx(0.5 / np.sqrt(2), rel=0.02)


def test_write_then_read_keeps_the_samples(tmp_path: Path) -> None:
    audio = Audio.from_float(_tone(0.3, 22_050), 22_050)
    back = read_wav(write_wav(tmp_path / "a.wav", audio))
    assert back.rate == 22_050 and np.array_equal(back.samples, audio.samples)


def test_not_a_wav_gives_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "request.mp3"
    path.write_bytes(b"ID3 not a wave file at all")
    with pytest.raises(AudioFormatError, match="not a PCM WAV file"):
        read_wav(path)
    with pytest.raises(AudioFormatError, match="no such file"):
        read_wav(tmp_path / "missing.wav")


def test_24_bit_samples_are_refused_by_name(tmp_path: Path) -> None:
    path = tmp_path / "deep.wav"
    with wave.open(str(path), "wb") as wav:
        wav.setnchannels(1)
        wav.setsampwidth(3)
        wav.setframerate(16_000)
        wav.writeframes(bytes(300))
    with pytest.raises(AudioFormatError, match="24-bit"):
        read_wav(path)
