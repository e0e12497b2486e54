"""Spoken requests made at test time: Piper (Jarvis's own voice) and espeak-ng, plus noise."""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path

import numpy as np

from jarvis.node.voice.audio import Audio, read_wav
from jarvis.node.voice.interfaces import TextToSpeech


def piper_speech(tts: TextToSpeech, text: str) -> Audio:
    return Audio.join(tts.synthesize(text))


def espeak_available() -> bool:
    return shutil.which("espeak-ng") is not None


def espeak_speech(text: str, voice: str = "en-us", speed: int = 150) -> Audio:
    """espeak-ng's rendering of `text` (a second, very different synthetic voice)."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "speech.wav"
        subprocess.run(["espeak-ng", "-v", voice, "-s", str(speed), "-w", str(path), text],
                       check=True, capture_output=True)
        return read_wav(path)


def request(wake: Audio | None, words: Audio, *, gap: float = 0.5) -> Audio:
    """Silence, the wake phrase, a pause, the request, then a second of silence."""
    parts = [Audio.silence(0.5)]
    if wake is not None:
        parts += [wake, Audio.silence(gap)]
    return Audio.join([*parts, words, Audio.silence(1.0)])


def with_noise(audio: Audio, snr_db: float, seed: int = 0) -> Audio:
    """White-ish noise (pink-tinted) added at `snr_db` below the speech's level."""
    rng = np.random.default_rng(seed)
    speech = audio.to_float()
    noise = np.cumsum(rng.normal(size=len(speech))) * 0.02
    noise = noise - np.convolve(noise, np.ones(400) / 400, mode="same")  # no slow drift
    noise += rng.normal(size=len(speech)) * 0.5
    voiced = speech[np.abs(speech) > 0.01]
    speech_power = float(np.mean(voiced**2)) if len(voiced) else 1e-6
    noise *= np.sqrt(speech_power / (np.mean(noise**2) * 10 ** (snr_db / 10)))
    return Audio.from_float(speech + noise, audio.rate)


def scaled(audio: Audio, gain_db: float) -> Audio:
    """The same audio louder or quieter (a speaker nearer or farther)."""
    return Audio.from_float(audio.to_float() * 10 ** (gain_db / 20), audio.rate)
