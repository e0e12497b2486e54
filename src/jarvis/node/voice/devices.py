"""Microphone and speaker through PortAudio (`sounddevice`).

PortAudio is a system library (Debian: `libportaudio2`); without it, or without a
microphone, opening a device fails with `AudioDeviceError` saying what to install or which
devices exist (`jarvis listen --devices`).
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from typing import Any

import numpy as np

from jarvis.node.voice.audio import FRAME_BYTES, SAMPLE_RATE, Audio

__all__ = ["AudioDeviceError", "Microphone", "Speaker", "list_devices"]


class AudioDeviceError(RuntimeError):
    """No usable microphone or speaker; the message says why and what to do."""


def _sounddevice() -> Any:
    try:
        import sounddevice
    except OSError as exc:  # the Python package is there, the PortAudio library is not
        raise AudioDeviceError(
            f"PortAudio is not installed ({exc}). On Debian or Ubuntu: "
            "sudo apt-get install libportaudio2"
        ) from None
    except ImportError:
        raise AudioDeviceError(
            "sounddevice is not installed: pip install 'jarvis-assistant[voice]'"
        ) from None
    return sounddevice


def _device(value: str | None) -> int | str | None:
    """A device given on the command line: its number, or part of its name."""
    if value is None or value == "":
        return None
    return int(value) if value.isdigit() else value


def _open(
    sd: Any, make: Callable[[int], Any], device: str | None, kind: str, rate: int
) -> tuple[Any, int]:
    """The stream `make(rate)` builds, started, or when the device refuses that rate the one
    at the device's own rate (the caller resamples); `AudioDeviceError` when neither opens."""
    what = "microphone" if kind == "input" else "speaker"
    try:
        try:
            stream = make(rate)
        except sd.PortAudioError:
            rate = int(sd.query_devices(_device(device), kind)["default_samplerate"])
            stream = make(rate)
        stream.start()
    except Exception as exc:
        raise AudioDeviceError(
            f"cannot open the {what} {device or '(default)'}: {exc}. "
            "See the devices with: jarvis listen --devices"
        ) from None
    return stream, rate


def list_devices() -> list[dict[str, Any]]:
    """Every audio device: index, name, input and output channels, and the defaults."""
    sd = _sounddevice()
    default_in, default_out = sd.default.device
    return [
        {
            "index": index,
            "name": info["name"],
            "inputs": info["max_input_channels"],
            "outputs": info["max_output_channels"],
            "default_input": index == default_in,
            "default_output": index == default_out,
        }
        for index, info in enumerate(sd.query_devices())
    ]


class Microphone:
    """An `AudioSource`: 16 kHz mono frames captured in PortAudio's thread, queued.

    A device that cannot record at 16 kHz is opened at its own rate and resampled here.
    """

    def __init__(self, device: str | None = None) -> None:
        sd = _sounddevice()
        self._frames: queue.Queue[bytes] = queue.Queue()
        self._pending = b""
        self._rate = SAMPLE_RATE

        def captured(data: Any, _frames: int, _time: Any, _status: Any) -> None:
            block = bytes(data)
            if self._rate != SAMPLE_RATE:
                block = Audio.from_bytes(block, self._rate).resampled(SAMPLE_RATE).to_bytes()
            self._frames.put(block)

        def make(rate: int) -> Any:
            self._rate = rate  # before the stream starts calling `captured`
            return sd.RawInputStream(
                samplerate=rate, blocksize=rate // 20, channels=1, dtype="int16",
                device=_device(device), callback=captured,
            )

        self._stream, _ = _open(sd, make, device, "input", SAMPLE_RATE)

    def read(self) -> bytes | None:
        while len(self._pending) < FRAME_BYTES:
            self._pending += self._frames.get()
        frame, self._pending = self._pending[:FRAME_BYTES], self._pending[FRAME_BYTES:]
        return frame

    def close(self) -> None:
        self._stream.stop()
        self._stream.close()


class Speaker:
    """An `AudioSink`: queued audio played by PortAudio's thread; `stop` cuts it short.

    A device that cannot play at `rate` is opened at its own rate; audio is resampled.
    """

    def __init__(self, device: str | None = None, rate: int = 22_050) -> None:
        sd = _sounddevice()
        self.rate = rate
        self._lock = threading.Lock()
        self._buffer = np.zeros(0, dtype=np.int16)

        def fill(out: Any, frames: int, _time: Any, _status: Any) -> None:
            with self._lock:
                chunk, self._buffer = self._buffer[:frames], self._buffer[frames:]
            out[: len(chunk), 0] = chunk
            out[len(chunk) :, 0] = 0

        def make(rate: int) -> Any:
            return sd.OutputStream(
                samplerate=rate, channels=1, dtype="int16", device=_device(device), callback=fill
            )

        self._stream, self.rate = _open(sd, make, device, "output", rate)

    def play(self, audio: Audio) -> None:
        samples = audio.resampled(self.rate).samples
        with self._lock:
            self._buffer = np.concatenate([self._buffer, samples])

    def playing(self) -> bool:
        with self._lock:
            return len(self._buffer) > 0

    def stop(self) -> None:
        with self._lock:
            self._buffer = np.zeros(0, dtype=np.int16)

    def close(self) -> None:
        self._stream.stop()
        self._stream.close()
