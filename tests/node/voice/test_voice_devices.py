"""Microphone and speaker over a stand-in PortAudio that only knows 48 kHz (no device)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from jarvis.node.voice import devices
from jarvis.node.voice.audio import FRAME_BYTES, Audio


class FakePortAudio:
    class PortAudioError(Exception):
        pass

    def __init__(self) -> None:
        self.streams: list[Any] = []

    def _stream(self, samplerate: int, callback: Any, **_: Any) -> Any:
        if samplerate != 48_000:
            raise self.PortAudioError(f"Invalid sample rate {samplerate}")
        stream = type("Stream", (), {"start": lambda s: None, "stop": lambda s: None,
                                     "close": lambda s: None})()
        stream.samplerate, stream.callback = samplerate, callback
        self.streams.append(stream)
        return stream

    def RawInputStream(self, **kwargs: Any) -> Any:
        return self._stream(**kwargs)

    def OutputStream(self, **kwargs: Any) -> Any:
        return self._stream(**kwargs)

    def query_devices(self, device: Any, kind: str) -> dict[str, Any]:
        return {"default_samplerate": 48_000.0}


@pytest.fixture
def portaudio(monkeypatch: pytest.MonkeyPatch) -> FakePortAudio:
    fake = FakePortAudio()
    monkeypatch.setattr(devices, "_sounddevice", lambda: fake)
    return fake


def test_a_48k_microphone_gives_16k_frames(portaudio: FakePortAudio) -> None:
    mic = devices.Microphone()
    stream = portaudio.streams[0]
    assert stream.samplerate == 48_000
    tone = Audio.from_float(0.5 * np.sin(np.arange(4800) * 0.05), 48_000)  # 0.1 s
    stream.callback(tone.to_bytes(), 4800, None, None)

    frames = [mic.read() for _ in range(10)]

    assert all(len(f) == FRAME_BYTES for f in frames)
    assert Audio.from_bytes(b"".join(frames)).rms() == pytest.approx(tone.rms(), rel=0.05)


def test_the_speaker_plays_what_is_queued_until_stopped(portaudio: FakePortAudio) -> None:
    speaker = devices.Speaker(rate=22_050)
    fill = portaudio.streams[0].callback
    assert speaker.rate == 48_000
    speaker.play(Audio.from_float(np.full(2205, 0.5), 22_050))  # 0.1 s -> 4800 samples

    out = np.zeros((4000, 1), dtype=np.int16)
    fill(out, 4000, None, None)
    assert speaker.playing() and (out[:, 0] != 0).all()

    speaker.stop()
    fill(out, 4000, None, None)
    assert not speaker.playing() and (out[:, 0] == 0).all()


def test_without_portaudio_the_message_names_the_package(monkeypatch: pytest.MonkeyPatch) -> None:
    import builtins

    real_import = builtins.__import__

    def no_portaudio(name: str, *args: Any, **kwargs: Any) -> Any:
        if name == "sounddevice":
            raise OSError("PortAudio library not found")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_portaudio)
    with pytest.raises(devices.AudioDeviceError, match="libportaudio2"):
        devices.Microphone()
